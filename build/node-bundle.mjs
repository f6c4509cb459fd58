// The esbuild options every Node-side bundle uses (the app, benchmarks, browser tests): ESM for
// Node 20 with packages left external, and a `require` for the CommonJS ones that need it.
export const NODE_BUNDLE = Object.freeze({
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: 'warning',
});
