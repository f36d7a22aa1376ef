//! The WebGPU mask kernel (`js/mask.wgsl`) parsed and validated by naga, the
//! WGSL front end of wgpu/Firefox, in both variants: f32 as written, and f16
//! derived exactly as `maskShader('f16')` in `js/webgpu.js` does (prepend
//! `enable f16;`, replace each line carrying a `// f16: ` comment by the text
//! after the marker). Also checks the entry point's workgroup size and the
//! three bindings the JS helper binds.
use naga::valid::{Capabilities, ValidationFlags, Validator};

const SRC: &str = include_str!("../../js/mask.wgsl");

fn f16_variant(src: &str) -> String {
    let body: Vec<&str> = src
        .lines()
        .map(|l| match l.find("// f16: ") {
            Some(k) => &l[k + "// f16: ".len()..],
            None => l,
        })
        .collect();
    format!("enable f16;\n{}", body.join("\n"))
}

fn check(src: &str, caps: Capabilities) -> naga::Module {
    let module = naga::front::wgsl::parse_str(src)
        .unwrap_or_else(|e| panic!("WGSL parse error:\n{}", e.emit_to_string(src)));
    Validator::new(ValidationFlags::all(), caps)
        .validate(&module)
        .unwrap_or_else(|e| panic!("WGSL validation error: {e:?}\n{src}"));
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == "main")
        .expect("entry point main");
    assert_eq!(ep.stage, naga::ShaderStage::Compute);
    assert_eq!(
        ep.workgroup_size,
        [256, 1, 1],
        "js/webgpu.js dispatches ceil(width / 256) workgroups"
    );
    let mut bindings: Vec<u32> = module
        .global_variables
        .iter()
        .filter_map(|(_, v)| v.binding.as_ref().map(|b| b.binding))
        .collect();
    bindings.sort();
    assert_eq!(bindings, [0, 1, 2]);
    module
}

fn logit_scalar(m: &naga::Module) -> naga::Scalar {
    let (_, logits) = m
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some("logits"))
        .expect("logits");
    match &m.types[logits.ty].inner {
        naga::TypeInner::Array { base, .. } => match m.types[*base].inner {
            naga::TypeInner::Scalar(s) => s,
            ref t => panic!("logits element {t:?}"),
        },
        t => panic!("logits type {t:?}"),
    }
}

#[test]
fn f32_kernel_validates() {
    let m = check(SRC, Capabilities::empty());
    assert_eq!(logit_scalar(&m), naga::Scalar::F32);
}

#[test]
fn f16_kernel_validates() {
    let src = f16_variant(SRC);
    assert!(src.contains("alias Logit = f16;"));
    let m = check(&src, Capabilities::SHADER_FLOAT16);
    assert_eq!(logit_scalar(&m), naga::Scalar::F16);
    // Without the capability the f16 variant is refused (the test can fail).
    let module = naga::front::wgsl::parse_str(&src).unwrap();
    assert!(
        Validator::new(ValidationFlags::all(), Capabilities::empty())
            .validate(&module)
            .is_err()
    );
}
