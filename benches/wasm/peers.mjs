// The JS peers installed in benches/wasm/node_modules (benches/wasm/package.json,
// `bash benches/setup.sh`), imported from here so that scripts in other
// folders (benches/sbs/) resolve them from this package.
export const officialPackage = () => import('@huggingface/transformers-structured-output');
