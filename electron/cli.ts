#!/usr/bin/env node
// The headless entry point (`slotscope …`): crawl, testsite, replay and demo, for servers, CI
// and Scrapy users who live in a terminal. Never imports electron.

import { readFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { describeSeedError, parseCrawlConfig } from './core/engine/crawl-config';
import { runVectorFile } from './core/engine/throttle/conformance';
import { ResumeError, runCrawl, StoreFaultError } from './core/crawl-runner';
import { HistoryOpenError } from './core/store/history-writer';
import { PluginError } from './core/engine/scopes';
import { startTestSite, demoScenario } from './core/testsite/index';
import { parseScenario, ScenarioError } from './core/testsite/scenario';
import { defaultDatabaseFile } from './core/store/data-dir';
import { APP_VERSION, parseDecimal, PRESETS } from '../shared/settings';
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP } from './core/json-depth';
import { runBrowserMode } from './browser-mode';
import { ListenError } from './server/ws-server';
import { EXPORT_USAGE, runExportCommand } from './core/store/export/cli-export';
import { REPLAY_DB_USAGE, runReplayDbCommand } from './core/whatif/cli-replay';
import { IMPORT_USAGE, runImportCommand } from './core/store/import/cli-import';
import { checkElectronLaunch, EXIT_NATIVE_MODULE, REBUILD_FOR_ELECTRON, runElectron } from './electron-binary';
import { fileURLToPath } from 'node:url';
import { hostname } from 'node:os';
import { runSharedCrawl } from './core/cluster/recorder';
import { runWorker } from './core/cluster/join';
import { SharedCrawlError } from './core/cluster/redis';

/** Each command's lines of the usage, shown whole by `slotscope --help` and alone by `slotscope CMD --help`. */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  crawl: `  slotscope crawl --config C.json --db FILE.sqlite [--seeds FILE] [--quiet]
      Run a crawl to its end; progress and log on stderr, a JSON summary line on stdout.
      Ctrl-C pauses it (in-flight requests finish) and saves it for --resume.
      --config - (or --seeds -) reads that file from standard input.
  slotscope crawl --db FILE.sqlite --resume ID [--quiet]
      Resume an interrupted (killed), paused or stopped crawl from its saved frontier and live settings.
  slotscope crawl --config C.json --db FILE.sqlite --redis URL [--no-fetch] [--name NAME] [--concurrency N]
      A shared crawl: its frontier and every slot's politeness live in Redis (URL: redis://[:password@]host:port[/db],
      rediss:// for TLS); this process records it into FILE.sqlite and fetches too unless --no-fetch.
      Workers join with \`slotscope worker\`. --resume ID --redis URL continues one whose recorder was stopped or killed.`,
  worker: `  slotscope worker --redis URL [--name NAME] [--concurrency N] [--stay]
      Fetch for the shared crawl open in that Redis (waiting for one to open); exits 0 when it ends, or with --stay
      waits for the next one. --concurrency: requests in flight at most (default the crawl's CONCURRENT_REQUESTS).`,
  testsite: `  slotscope testsite --config S.json [--log FILE]
      Serve a scenario of local test hosts; prints {"ready": true, "hosts": {...}} when listening.`,
  replay: `  slotscope replay --vectors FILE.json
      Replay recorded Scrapy AutoThrottle cases through the throttle policy.
${REPLAY_DB_USAGE}`,
  demo: `  slotscope demo [--db FILE.sqlite] [--quiet]
      Crawl the built-in test site and print where its history went.`,
  serve: `  slotscope serve [--port N] [--host 127.0.0.1] [--db FILE.sqlite] [--demo] [--open] [--redis URL]
      The app in a browser: serves the UI and its WebSocket on one port, behind a token in the printed URL.
      --redis URL: crawls started from the console are shared crawls in that Redis; this process records them
      and fetches too, \`slotscope worker --redis URL\` processes join, and the Workers tab lists them.`,
  start: `  slotscope start
      What \`npm start\` runs: the desktop app where it can run (the Electron binary, a display, better-sqlite3
      built for Electron); otherwise, saying why, serve on the default database with the built-in test site
      as a demo, opening a browser.`,
  export: EXPORT_USAGE,
  import: IMPORT_USAGE,
};

const EXIT_CODES = 'Exit codes: 0 ok, 1 failure, 2 invalid input.';

const USAGE = `slotscope ${APP_VERSION}: watch and steer a polite web crawl

Usage:
${Object.values(COMMAND_USAGE).join('\n')}

Add --help to a command for its part of this text.
${EXIT_CODES}`;

/** The usage of one command (`slotscope crawl --help`), or all of it. */
function usageOf(command?: string): string {
  return command !== undefined && Object.hasOwn(COMMAND_USAGE, command) ? `Usage:\n${COMMAND_USAGE[command]}\n\n${EXIT_CODES}` : USAGE;
}

/** A command line of the wrong shape: printed with the command's usage, exit 2. */
class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

/** Bad input in a file or a value (the command line's shape was right): printed alone, exit 2. */
class InputError extends Error {}

/** Reads `--name value`, `--name=value` and switches (`--quiet`, which take no value); anything else is refused. */
function parseArgs(command: string, argv: string[], flags: readonly string[], switches: readonly string[] = []): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new UsageError(`unknown argument "${a}"`, command);
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2);
    if (switches.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value (drop "=${inline}")`, command);
      out[name] = true;
    } else if (flags.includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value`, command);
      out[name] = v;
    } else {
      throw new UsageError(`unknown argument "${a}"`, command);
    }
  }
  return out;
}

/** A whole number given on the command line (decimal digits, as every number Slotscope reads). */
function wholeFlag(command: string, flag: string, v: string | boolean, min: number, max: number, allowed: string): number {
  const n = typeof v === 'string' ? parseDecimal(v, true) : null;
  if (n === null || n < min || n > max) throw new UsageError(`--${flag}: ${JSON.stringify(v)} is not allowed (${allowed})`, command);
  return n;
}

/** The name `file` is shown by in messages: standard input for `-`. */
const shownName = (file: string): string => (file === '-' ? '(standard input)' : file);

/** A file's text, or standard input's for `-`. */
async function readInput(file: string, what: string): Promise<string> {
  try {
    if (file !== '-') return readFileSync(file, 'utf8');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  } catch (e) {
    throw new InputError(`cannot read ${what} ${shownName(file)}: ${(e as Error).message}`);
  }
}

/** A JSON file (or standard input): its value, or an InputError naming it (bad JSON, nested too deep). */
async function readJson(file: string, what: string): Promise<unknown> {
  const text = await readInput(file, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${what} ${shownName(file)} is not valid JSON: ${(e as Error).message}`);
  }
  // Checked before anything walks it: a document nested 200,000 levels deep is refused, not a RangeError.
  if (nestedDeeperThan(value)) throw new InputError(`${what} ${shownName(file)} is not allowed: it is nested more than ${MAX_JSON_DEPTH} levels deep (a ${what} is ${TOO_DEEP})`);
  return value;
}

const err = (line: string) => process.stderr.write(`${line}\n`);

/** A line of input as JSON, cut to 120 characters. */
const shortText = (text: string): string => JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);

/** Ctrl-C (SIGINT) or SIGTERM pauses the crawl and saves it; a second one exits at once. */
function pauseOnSignal(): AbortController {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (ac.signal.aborted) process.exit(130);
    err(`${sig}: pausing the crawl (in-flight requests finish, at most 5 s); ${sig} again to quit at once`);
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return ac;
}

async function cmdResume(a: Record<string, string | boolean>): Promise<number> {
  if (a.config || a.seeds) throw new UsageError('crawl --resume takes the crawl\'s stored config and live settings; drop --config and --seeds', 'crawl');
  if (!a.db) throw new UsageError('crawl --resume ID needs --db FILE.sqlite', 'crawl');
  const id = wholeFlag('crawl', 'resume', a.resume, 1, Number.MAX_SAFE_INTEGER, 'a crawl id, a whole number >= 1');
  const db = resolvePath(String(a.db));
  const ac = pauseOnSignal();
  if (a.redis !== undefined) return sharedCrawl(a, { resume: id, db, signal: ac.signal });
  try {
    const { summary, stats } = await runCrawl({ resume: id, db, log: a.quiet ? undefined : err, signal: ac.signal });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (stats.status === 'paused') err(`crawl ${id} paused and saved; resume it with: slotscope crawl --db ${db} --resume ${id}`);
  } catch (e) {
    if (!(e instanceof ResumeError)) throw e;
    err(`slotscope: cannot resume: ${e.message}`);
    return 2;
  }
  return 0;
}

async function cmdCrawl(argv: string[]): Promise<number> {
  const a = parseArgs('crawl', argv, ['config', 'db', 'seeds', 'resume', 'redis', 'name', 'concurrency'], ['quiet', 'no-fetch']);
  if (a.redis === undefined) {
    for (const f of ['no-fetch', 'name', 'concurrency']) if (a[f] !== undefined) throw new UsageError(`--${f} is for a shared crawl: add --redis URL`, 'crawl');
  }
  if (a.resume !== undefined) return cmdResume(a);
  if (!a.config || !a.db) throw new UsageError('crawl needs --config C.json and --db FILE.sqlite (or --db FILE.sqlite --resume ID)', 'crawl');
  if (a.config === '-' && a.seeds === '-') throw new UsageError('only one of --config and --seeds can be - (standard input)', 'crawl');
  const configName = shownName(String(a.config));
  const json = await readJson(String(a.config), 'crawl config');
  const seedText = a.seeds ? await readInput(String(a.seeds), 'seeds file') : undefined;
  const parsed = parseCrawlConfig(json, seedText);
  if (!parsed.ok) {
    err(`invalid crawl config ${configName}:`);
    for (const e of parsed.errors) err(`  ${e.message}`);
    return 2;
  }
  // The first bad seed lines, and a count of the rest: a seeds file of 100,000 bad lines is not echoed back.
  const skipped = parsed.config.seedErrors;
  for (const e of skipped.slice(0, 10)) err(`skipped ${describeSeedError(e)}: ${shortText(e.text.trim())}`);
  if (skipped.length > 10) err(`skipped ... and ${(skipped.length - 10).toLocaleString('en-US')} more bad seed lines (${skipped.length.toLocaleString('en-US')} in all)`);
  const db = resolvePath(String(a.db));
  mkdirSync(dirname(db), { recursive: true });
  const ac = pauseOnSignal();
  if (a.redis !== undefined) return sharedCrawl(a, { config: parsed.config, db, signal: ac.signal });
  try {
    const { summary, stats } = await runCrawl({
      config: parsed.config, db, log: a.quiet ? undefined : err, signal: ac.signal,
      baseDir: a.config === '-' ? process.cwd() : dirname(resolvePath(String(a.config))),
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (stats.status === 'paused') err(`crawl ${summary.crawl_id} paused and saved; resume it with: slotscope crawl --db ${db} --resume ${summary.crawl_id}`);
  } catch (e) {
    if (!(e instanceof PluginError)) throw e;
    err(`invalid crawl config ${configName}:\n  settings.${e.message}`);
    return 2;
  }
  return 0;
}

/** `crawl --redis`: the recorder of a shared crawl (and a fetcher unless --no-fetch). */
async function sharedCrawl(a: Record<string, string | boolean>, o: { config?: import('./core/engine/crawl-config').CrawlConfig; resume?: number; db: string; signal: AbortSignal }): Promise<number> {
  const concurrency = a.concurrency === undefined ? undefined : wholeFlag('crawl', 'concurrency', a.concurrency, 1, 10000, 'a whole number from 1 to 10000');
  if (a.name !== undefined && !/^[\w.@:-]{1,64}$/.test(String(a.name))) throw new UsageError(`--name: ${JSON.stringify(a.name)} is not allowed (1-64 letters, digits, and . @ : _ -)`, 'crawl');
  mkdirSync(dirname(o.db), { recursive: true });
  try {
    const { summary, status } = await runSharedCrawl({
      ...o, redis: String(a.redis), fetch: !a['no-fetch'], name: a.name === undefined ? undefined : String(a.name), concurrency,
      log: a.quiet ? undefined : err,
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (status === 'paused') err(`crawl ${summary.crawl_id} paused; resume it with: slotscope crawl --db ${o.db} --resume ${summary.crawl_id} --redis ${String(a.redis).replace(/:[^:@/]*@/, ':***@')}`);
  } catch (e) {
    if (e instanceof SharedCrawlError || e instanceof ResumeError) {
      err(`slotscope: ${e instanceof ResumeError ? 'cannot resume: ' : ''}${e.message}`);
      return 2;
    }
    throw e;
  }
  return 0;
}

async function cmdWorker(argv: string[]): Promise<number> {
  const a = parseArgs('worker', argv, ['redis', 'name', 'concurrency'], ['stay', 'quiet']);
  if (a.redis === undefined) throw new UsageError('worker needs --redis URL', 'worker');
  const concurrency = a.concurrency === undefined ? undefined : wholeFlag('worker', 'concurrency', a.concurrency, 1, 10000, 'a whole number from 1 to 10000');
  const name = a.name === undefined ? `worker-${process.pid}@${hostname()}` : String(a.name);
  if (!/^[\w.@:-]{1,64}$/.test(name)) throw new UsageError(`--name: ${JSON.stringify(name)} is not allowed (1-64 letters, digits, and . @ : _ -)`, 'worker');
  const ac = new AbortController();
  const onSignal = () => {
    if (ac.signal.aborted) process.exit(130);
    err('worker: finishing the requests in flight, then leaving (again to quit at once)');
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await runWorker({ redis: String(a.redis), name, concurrency, stay: Boolean(a.stay), log: a.quiet ? () => undefined : err, signal: ac.signal });
  } catch (e) {
    if (e instanceof SharedCrawlError) {
      err(`slotscope: ${e.message}`);
      return 2;
    }
    throw e;
  }
  return 0;
}

async function cmdTestsite(argv: string[]): Promise<number> {
  const a = parseArgs('testsite', argv, ['config', 'log']);
  if (!a.config) throw new UsageError('testsite needs --config S.json', 'testsite');
  let scenario;
  const json = await readJson(String(a.config), 'scenario');
  try {
    scenario = parseScenario(json);
  } catch (e) {
    if (e instanceof ScenarioError) {
      err(`invalid scenario ${a.config}:\n  ${e.message}`);
      return 2;
    }
    throw e;
  }
  const site = await startTestSite(scenario, { log: a.log ? String(a.log) : undefined });
  process.stdout.write(`${JSON.stringify({ ready: true, hosts: site.hosts })}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await site.close();
  return 0;
}

async function cmdReplay(argv: string[]): Promise<number> {
  // The what-if replay of a stored crawl (--db …) has its own module; --vectors stays as it was.
  if (argv.some((x) => /^--(db|crawl|settings|slot)(=|$)/.test(x))) return runReplayDbCommand(argv, process);
  const a = parseArgs('replay', argv, ['vectors']);
  if (!a.vectors) throw new UsageError('replay needs --vectors FILE.json', 'replay');
  const results = runVectorFile(await readJson(String(a.vectors), 'vectors file'));
  let passed = 0;
  let failed = 0;
  for (const r of results) {
    if (r.pass) passed++;
    else {
      failed++;
      process.stdout.write(`FAIL ${r.name}: ${r.difference}\n`);
    }
  }
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}

async function cmdDemo(argv: string[]): Promise<number> {
  const a = parseArgs('demo', argv, ['db'], ['quiet']);
  const db = a.db ? resolvePath(String(a.db)) : defaultDatabaseFile();
  mkdirSync(dirname(db), { recursive: true });
  const site = await startTestSite(demoScenario(), { loopbackFallback: true });
  try {
    const hosts = Object.keys(site.hosts);
    const preset = PRESETS.find((p) => p.id === 'many-sites')!;
    const parsed = parseCrawlConfig({
      name: 'Demo: built-in test site',
      seeds: hosts.map((h) => `${site.origin(h)}/`),
      follow: { scope: 'host', max_pages: 160 },
      settings: { ...preset.settings, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_DEBUG: true },
      resolve: site.resolve,
    });
    if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
    err(`demo: crawling ${hosts.join(', ')} (built-in test site on loopback) with the "${preset.label}" preset`);
    const { summary } = await runCrawl({ config: parsed.config, db, log: a.quiet ? undefined : err });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    err(`demo: history saved to ${db} (crawl ${summary.crawl_id})`);
  } finally {
    await site.close();
  }
  return 0;
}

async function cmdServe(argv: string[], defaults: { demo: boolean; open: boolean }): Promise<number> {
  const a = parseArgs('serve', argv, ['port', 'host', 'db', 'redis'], ['demo', 'open']);
  const port = a.port === undefined ? 0 : wholeFlag('serve', 'port', a.port, 0, 65535, 'a port number 0-65535, 0 for any free port');
  const host = a.host === undefined ? '127.0.0.1' : String(a.host);
  if (host.trim() === '') throw new UsageError('--host: "" is not allowed (an address of this machine to listen on, e.g. 127.0.0.1)', 'serve');
  try {
    await runBrowserMode({
      db: a.db ? resolvePath(String(a.db)) : defaultDatabaseFile(),
      host,
      port,
      demo: Boolean(a.demo) || defaults.demo,
      open: Boolean(a.open) || defaults.open,
      ...(a.redis !== undefined ? { redis: String(a.redis) } : {}),
      log: err,
    });
  } catch (e) {
    if (e instanceof SharedCrawlError) {
      err(`slotscope: ${e.message}`);
      return 2;
    }
    if (!(e instanceof ListenError)) throw e;
    // Everything opened was closed (the database lock released) before this line.
    if (e.portFault) {
      err(`slotscope: ${e.message}`);
      return 1;
    }
    err(`slotscope: --host: ${JSON.stringify(host)} is not allowed (an address of this machine to listen on, e.g. 127.0.0.1): ${e.reason}`);
    return 2;
  }
  return 0;
}

/**
 * `npm start`: the desktop app where it can run (the Electron binary, a display, better-sqlite3 built
 * for Electron), else browser mode, saying what stopped the desktop app and what to do about it.
 * Options are browser mode's, so with any it is browser mode.
 */
async function cmdStart(argv: string[]): Promise<number> {
  const root = resolvePath(dirname(fileURLToPath(import.meta.url)), '..');
  if (argv.length === 0) {
    const electron = checkElectronLaunch(root);
    if (electron.ok) {
      const code = await runElectron(electron.path, resolvePath(root, 'dist', 'electron', 'main.js'));
      if (code !== EXIT_NATIVE_MODULE) return code;
      err(`slotscope: Electron ${electron.version} could not load better-sqlite3 (built for another Node or Electron): \`${REBUILD_FOR_ELECTRON}\` rebuilds it for Electron; starting browser mode`);
    } else {
      err(['slotscope: the desktop app cannot start here, so this is browser mode:', ...electron.problems.map((p) => `  - ${p.reason}`)].join('\n'));
    }
  }
  return cmdServe(argv, { demo: true, open: true });
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  // `slotscope CMD --help` (anywhere among its arguments) shows that command's usage, and nothing runs.
  if (cmd !== undefined && Object.hasOwn(COMMAND_USAGE, cmd) && rest.some((x) => x === '--help' || x === '-h')) {
    process.stdout.write(`${usageOf(cmd)}\n`);
    return 0;
  }
  switch (cmd) {
    case 'crawl':
      return cmdCrawl(rest);
    case 'worker':
      return cmdWorker(rest);
    case 'testsite':
      return cmdTestsite(rest);
    case 'replay':
      return cmdReplay(rest);
    case 'demo':
      return cmdDemo(rest);
    case 'serve':
      return cmdServe(rest, { demo: false, open: false });
    case 'export':
      return runExportCommand(rest, process);
    case 'import':
      return runImportCommand(rest, process);
    case 'start':
      return cmdStart(rest);
    case '--version':
    case 'version':
      process.stdout.write(`${APP_VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${usageOf(cmd === 'help' ? rest[0] : undefined)}\n`);
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${cmd}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      err(`slotscope: ${e.message}\n\n${usageOf(e.command)}`);
      process.exitCode = 2;
    } else if (e instanceof InputError) {
      err(`slotscope: ${e.message}`);
      process.exitCode = 2;
    } else if (e instanceof HistoryOpenError || e instanceof StoreFaultError) {
      // A corrupt, newer, foreign, locked or read-only database, or a history the store could not
      // write before the crawl had to end: the message says what to do; no stack, no retry.
      err(`slotscope: ${e.message}`);
      process.exitCode = 1;
    } else {
      err(`slotscope: ${(e as Error)?.stack ?? String(e)}`);
      process.exitCode = 1;
    }
  },
);
