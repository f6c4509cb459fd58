// electron-builder's configuration for the desktop packages (`npm run dist`): AppImage and deb,
// dmg, NSIS. CommonJS because electron-builder require()s it and the package is "type": "module".
//
// better-sqlite3 is a native module: `npm install` builds it for Node (the CLI, the browser host and
// every Node test use it so); only packaging rebuilds it for Electron's ABI, from source (needs the
// network: Electron's headers and binary). It does so in place, so `npm run dist`
// (build/electron-builder.dist.mjs) rebuilds it for Node again afterwards.

/** @type {import('app-builder-lib').Configuration} */
const config = {
  appId: 'dev.slotscope.desktop',
  productName: 'Slotscope',
  // Pinned to the electron devDependency's version (checked by test/integration/electron-main/packaging.test.ts).
  electronVersion: '45.5.0',
  directories: { output: 'release', buildResources: 'build' },
  // The bundles (dist/electron/main.js = package.json `main`, preload, history worker, CLI, renderer);
  // production dependencies come along by themselves. Source maps stay out of the package.
  files: ['dist/**', '!dist/**/*.map', 'package.json'],
  asar: true,
  // A .node file cannot be loaded from inside the asar archive.
  asarUnpack: ['node_modules/better-sqlite3/**/*.node'],
  // Electron's fuses, flipped in the packaged binary (before signing): it cannot be run as plain Node
  // (ELECTRON_RUN_AS_NODE; the app uses worker threads, never child_process.fork), NODE_OPTIONS,
  // NODE_EXTRA_CA_CERTS and --inspect are ignored, cookies are encrypted at rest, and the app loads
  // only from app.asar, whose integrity electron-builder embeds and Electron checks (macOS, Windows).
  electronFuses: {
    runAsNode: false,
    enableCookieEncryption: true,
    enableNodeOptionsEnvironmentVariable: false,
    enableNodeCliInspectArguments: false,
    enableEmbeddedAsarIntegrityValidation: true,
    onlyLoadAppFromAsar: true,
  },
  // Rebuild native dependencies for Electron at packaging time, from source.
  npmRebuild: true,
  buildDependenciesFromSource: true,
  nodeGypRebuild: false,
  linux: {
    target: ['AppImage', 'deb'],
    category: 'Development',
    maintainer: 'Slotscope contributors',
    synopsis: 'Watch and steer a polite web crawl',
  },
  mac: {
    target: ['dmg'],
    category: 'public.app-category.developer-tools',
  },
  win: {
    target: ['nsis'],
  },
  nsis: {
    oneClick: false,
    perMachine: false,
    allowToChangeInstallationDirectory: true,
  },
};

module.exports = config;
