// `slotscope replay --db FILE --crawl ID --settings S.json [--slot KEY]`: a what-if replay of a
// stored crawl from the terminal, stored as a derived crawl; its id and counts go to stdout as JSON.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { openHistoryWriter } from '../store/history-writer';
import { openHistoryReader } from '../store/queries';
import { runWhatIf, WhatIfError, WhatIfSettingsError } from './derive';

export const REPLAY_DB_USAGE = `  slotscope replay --db FILE.sqlite --crawl ID --settings S.json [--slot KEY]
      What AutoThrottle and backoff would have done with other settings: replays the crawl's recorded
      responses (one slot's with --slot) through the throttle policy and stores a derived crawl.
      S.json: {"AUTOTHROTTLE_TARGET_CONCURRENCY": 4, ...} (or a crawl config with "settings").`;

/** Where the command writes: the process's streams, or a test's. */
export interface ReplayIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** A bad command line: printed with the usage, exit code 2. */
class FlagError extends Error {}

/** `--flag: "value" is not allowed (what is)`. */
function flagError(flag: string, value: unknown, allowed: string): FlagError {
  return new FlagError(`--${flag}: ${JSON.stringify(value)} is not allowed (${allowed})`);
}

/** `--name value` / `--name=value` flags; unknown or repeated ones are refused. */
function readFlags(argv: readonly string[], names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new FlagError(`unexpected argument ${JSON.stringify(a)} (flags start with --)`);
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (!names.includes(name)) throw new FlagError(`unknown flag ${JSON.stringify(a)}; known: ${names.map((f) => `--${f}`).join(', ')}`);
    if (out.has(name)) throw new FlagError(`--${name} is given twice`);
    const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
    if (v === undefined) throw new FlagError(`--${name} needs a value`);
    out.set(name, v);
  }
  return out;
}

/** The what-if settings in a file: a settings object, or a crawl config's `settings`. */
function readSettings(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw flagError('settings', file, `a readable JSON file (${(e as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw flagError('settings', file, `a JSON file of SETTING_NAME: value (${(e as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw flagError('settings', file, 'a JSON object of SETTING_NAME: value');
  const o = json as Record<string, unknown>;
  const nested = o.settings;
  if (nested !== undefined && typeof nested === 'object' && nested !== null && !Array.isArray(nested) && !Object.keys(o).some((k) => /^[A-Z]/.test(k))) {
    return nested as Record<string, unknown>;
  }
  return o;
}

/** Runs `slotscope replay --db …`; resolves with the exit code (0 ok, 1 failure, 2 invalid input). */
export async function runReplayDbCommand(argv: readonly string[], io: ReplayIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  let db: string;
  let crawlId: number;
  let slot: string | undefined;
  let settings: Record<string, unknown>;
  try {
    const flags = readFlags(argv, ['db', 'crawl', 'settings', 'slot']);
    const dbArg = flags.get('db');
    if (dbArg === undefined || dbArg === '') throw new FlagError('--db FILE.sqlite is required');
    db = resolve(dbArg);
    if (!existsSync(db) || !statSync(db).isFile()) throw flagError('db', dbArg, 'an existing Slotscope history database file');
    const crawl = flags.get('crawl');
    if (crawl === undefined) throw new FlagError('--crawl ID is required');
    if (!/^[1-9]\d{0,14}$/.test(crawl)) throw flagError('crawl', crawl, 'a crawl id, a whole number >= 1');
    crawlId = Number(crawl);
    const file = flags.get('settings');
    if (file === undefined || file === '') throw new FlagError('--settings S.json is required');
    settings = readSettings(file);
    const s = flags.get('slot');
    if (s !== undefined && s === '') throw flagError('slot', s, 'a slot key, e.g. a host name');
    slot = s;
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    err(`slotscope replay: ${e.message}\n\nUsage:\n${REPLAY_DB_USAGE}`);
    return 2;
  }
  const writer = await openHistoryWriter(db);
  const reader = openHistoryReader(db);
  try {
    const result = await runWhatIf({ reader, writer, crawlId, slot, settings });
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof WhatIfSettingsError) {
      err('slotscope replay: invalid --settings (nothing was stored):');
      for (const x of e.errors) err(`  ${x.message}`);
      return 2;
    }
    if (e instanceof WhatIfError) {
      err(`slotscope replay: ${e.message} (nothing was stored)`);
      return 2;
    }
    throw e;
  } finally {
    reader.close();
    await writer.close();
  }
}
