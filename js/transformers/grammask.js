// The one import of the package itself by grammask/transformers: the
// processor runs on the entry the application loaded ('grammask' resolves
// to the Node, bundler or web build). scripts/build/build-www.sh rewrites this
// line for the demo page, whose module worker has no import map.
export { Matcher, PreparedVocab, compile } from 'grammask';
