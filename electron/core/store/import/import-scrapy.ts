// Imports a Scrapy log written with AUTOTHROTTLE_DEBUG as a finished crawl: one response row per
// debug line (status and URL from the line Scrapy writes next, when the log has it), the delay changes,
// the debug lines and the log's warnings, all through the history writer. Unreadable lines are counted.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { applySettings, DEFAULT_SETTINGS, settingSpec, type Settings } from '../../../../shared/settings';
import type { ImportReport, UnreadableLine } from '../../../../shared/contract';
import type { EventRecord, ResponseRecord } from '../../../../shared/types';
import { openHistoryWriter, type HistoryWriter, type HistoryWriterOptions } from '../history-writer';
import type { TimeZoneSpec } from '../export/wall-time';
import { bracketsBalanced, parseLogLine, parseResponseMessage, readSettingsDict, type DebugFields } from './scrapy-log';

export interface ImportOptions {
  /** The crawl's name; default `Scrapy log <file name>`. */
  readonly name?: string;
  /** Time zone of timestamps without an offset; default this machine's. */
  readonly tz?: TimeZoneSpec;
  /** Called about every 100 ms with the bytes read so far and the file's size. */
  readonly onProgress?: (p: { readonly bytes: number; readonly size: number; readonly lines: number }) => void;
  readonly writer?: HistoryWriterOptions;
}

export type { ImportReport, UnreadableLine } from '../../../../shared/contract';

/** A setting of the log's "Overridden settings" that the crawl does not have, and why. */
export interface SkippedSetting {
  readonly setting: string;
  /** Its value is not a Python literal (`<class …>`, `<function …>`, …), or Slotscope refuses the value. */
  readonly reason: string;
}

/** The import report with the settings skipped (each also in settingsIgnored, and an event of the crawl). */
export interface ScrapyImportReport extends ImportReport {
  readonly settingsSkipped: readonly SkippedSetting[];
}

/** A debug line waiting (a few seconds at most) for the line that gives its status and URL. */
interface Pending {
  readonly t: number;
  readonly f: DebugFields;
  readonly message: string;
  status: number | null;
  method: string;
  url: string;
  paired: boolean;
}

/** How long (log time) and how many lines a debug line waits for its Crawled line. */
const PAIR_WINDOW_MS = 10_000;
const PAIR_MAX_PENDING = 5000;
const WRITER_BACKLOG = 20_000;
const FIRST_UNREADABLE = 10;

/** Host of a URL as Scrapy keys slots: lower-cased, no port, IPv6 without brackets. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return null;
  }
}

/**
 * The value a printed number most likely stood for: `%d` truncates toward zero, so `120` was in
 * [120, 121): its middle, 120.5 (-120 → -120.5); `0` of a diff means no change. `%.0f` rounds: the number itself.
 */
function printedValue(n: number, f: DebugFields, isDiff = false): number {
  if (f.numbers === 'rounded' || (isDiff && n === 0)) return n;
  return n >= 0 ? n + 0.5 : n - 0.5;
}

/** The response row, change and event of one debug line. */
function toRecords(p: Pending): { response: ResponseRecord; changed: boolean; event: EventRecord } {
  const f = p.f;
  const after = printedValue(f.delayMs, f) / 1000;
  const before = after - printedValue(f.diffMs, f, true) / 1000;
  const latency = printedValue(f.latencyMs, f) / 1000;
  return {
    response: {
      t: p.t,
      startedAt: p.t - latency * 1000,
      waitMs: 0,
      slot: f.slot,
      url: p.url,
      method: p.method,
      status: p.status,
      latency,
      downloadTime: null,
      bytes: f.size,
      inFlight: f.conc ?? 0,
      delayBefore: before,
      delayAfter: after,
      delayCause: 'autothrottle',
      backoffLevel: 0,
      reused: null,
      errorKind: null,
      errorMessage: null,
      depth: 0,
      contentType: null,
    },
    changed: f.diffMs !== 0,
    event: { t: p.t, slot: f.slot, kind: 'debug', code: 'autothrottle', text: p.message },
  };
}

/**
 * Reads `file` line by line (constant memory) and records it as one finished crawl in `dbFile`.
 * Throws only when the log cannot be read or the database cannot be opened or written; lines it
 * cannot read are counted in the report.
 */
export async function importScrapyLog(file: string, dbFile: string, o: ImportOptions = {}): Promise<ScrapyImportReport> {
  const size = (await stat(file)).size;
  const writer: HistoryWriter = await openHistoryWriter(dbFile, o.writer);
  const input = createReadStream(file, { encoding: 'utf8' });
  try {
    return await importScrapyLogInto(writer, { input, size, fileName: basename(file), bytesRead: () => input.bytesRead }, o);
  } finally {
    input.destroy();
    await writer.close().catch(() => undefined);
  }
}

/** A log to import from a stream: a file, an upload, a text. */
export interface LogSource {
  readonly input: Readable;
  /** Its size in bytes when known (progress), else 0. */
  readonly size: number;
  /** The file's name, for the crawl's default name and its summary. */
  readonly fileName: string;
  /** Bytes consumed so far (progress). */
  readonly bytesRead: () => number;
}

/** The log of `src` into a crawl written by `writer` (which stays open: the core's own, or the CLI's). */
export async function importScrapyLogInto(writer: HistoryWriter, src: LogSource, o: ImportOptions = {}): Promise<ScrapyImportReport> {
  const { input, size } = src;
  const file = src.fileName;
  const tz = o.tz ?? 'local';
  const name = o.name ?? `Scrapy log ${file}`;
  let writeError: Error | undefined;
  const onWriteError = (e: Error) => {
    writeError ??= e;
  };
  writer.on('error', onWriteError);

  let crawlId: number | null = null;
  let lineNo = 0;
  let lastTime: number | null = null;
  let firstTime: number | null = null;
  let openedAt: number | null = null;
  let closedAt: number | null = null;
  let finishReason: string | null = null;
  let scrapyVersion: string | null = null;
  let debugLines = 0;
  let withStatus = 0;
  let unreadable = 0;
  const firstUnreadable: UnreadableLine[] = [];
  const slots = new Set<string>();
  // Scrapy has no backoff: an imported crawl's own settings switch it off, so a what-if with them
  // gives back the delays Scrapy printed even where it logged 503s and 429s.
  let settings: Settings = { ...DEFAULT_SETTINGS, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [] };
  const settingsApplied: string[] = [];
  const settingsIgnored: string[] = [];
  const settingsSkipped: SkippedSetting[] = [];
  let settingsText: string | null = null;
  /** Time of the "Overridden settings" line. */
  let settingsTime: number | null = null;
  /** Warnings and errors seen before the crawl row exists (bounded). */
  const earlyEvents: EventRecord[] = [];

  const pending: Pending[] = [];
  const unpaired = new Map<string, Pending[]>();

  /**
   * The debug line a response line (Crawled/Redirecting/Retrying) belongs to, taken out of the waiting
   * ones. Scrapy writes a response's debug line first (response_downloaded fires in the downloader)
   * and its response line a few event-loop hops later, after the downloader middlewares; another
   * response's debug line may come between them, but the lines keep their order (first in, first
   * out). The response line does not name its slot, so: the oldest waiting debug line of the slot
   * named like the URL's host (a slot keyed by host name, Scrapy's default), else the oldest waiting
   * debug line of any slot (a slot keyed by meta["download_slot"] or by IP address).
   */
  const pairFor = (url: string): Pending | undefined => {
    const host = hostOf(url);
    const own = host === null ? undefined : unpaired.get(host)?.shift();
    if (own) return own;
    const oldest = pending.find((p) => !p.paired);
    if (oldest) unpaired.get(oldest.f.slot)?.shift();
    return oldest;
  };

  const bad = (reason: string, text: string) => {
    unreadable++;
    if (firstUnreadable.length < FIRST_UNREADABLE) firstUnreadable.push({ line: lineNo, reason, text: text.length > 200 ? `${text.slice(0, 197)}...` : text });
  };

  /** A setting left out, named in the report and as an event: a warning if Slotscope uses it, a note if not. */
  const skipSetting = (setting: string, reason: string) => {
    settingsIgnored.push(setting);
    settingsSkipped.push({ setting, reason });
    const t = settingsTime ?? lastTime;
    if (t === null) return;
    const used = settingSpec(setting) !== undefined;
    const e: EventRecord = {
      t, slot: null, kind: used ? 'warning' : 'info', code: 'import-setting',
      text: `Overridden settings: ${setting} skipped (${reason}); ` +
        (used ? 'the imported crawl has its default value' : 'Slotscope has no such setting'),
      data: { setting, reason },
    };
    if (crawlId !== null) writer.recordEvent(crawlId, e);
    else if (earlyEvents.length < 1000) earlyEvents.push(e);
  };

  /** Reads the "Overridden settings" dict: each value on its own, so one that cannot be read loses only itself. */
  const applyOverridden = (text: string) => {
    const dict = readSettingsDict(text);
    if (dict === null) {
      skipSetting('(all)', `the settings are not a Python dict: ${JSON.stringify(text.trim().slice(0, 80))}`);
      return;
    }
    const unread = new Map(dict.skipped.map((u) => [u.setting, u.reason]));
    for (const k of dict.keys) {
      const why = unread.get(k);
      if (why !== undefined) {
        skipSetting(k, why);
        continue;
      }
      if (!settingSpec(k)) {
        settingsIgnored.push(k);
        continue;
      }
      const r = applySettings({ [k]: dict.values[k] }, settings);
      if (r.ok) {
        settings = r.settings;
        settingsApplied.push(k);
      } else skipSetting(k, r.errors.map((x) => x.message).join('; '));
    }
    // What could not be read past a broken key ("(the rest)").
    for (const u of dict.skipped) if (!dict.keys.includes(u.setting)) skipSetting(u.setting, u.reason);
  };

  const ensureCrawl = async (first: Pending) => {
    if (crawlId !== null) return crawlId;
    // A log does not say what the spider's start URLs were: none are made up (a copy is given its own).
    const config = { name, seeds: [], follow: { scope: 'none' } };
    crawlId = await writer.createCrawl(name, config, settings, firstTime ?? first.t);
    for (const e of earlyEvents.splice(0)) writer.recordEvent(crawlId, e);
    return crawlId;
  };

  const emit = async (p: Pending) => {
    const id = await ensureCrawl(p);
    const { response, changed, event } = toRecords(p);
    writer.recordResponse(id, response);
    if (changed) {
      writer.recordChange(id, { t: p.t, slot: p.f.slot, setting: 'delay', source: 'autothrottle', oldValue: response.delayBefore, newValue: response.delayAfter });
    }
    writer.recordEvent(id, event);
    debugLines++;
    if (p.status !== null) withStatus++;
    slots.add(p.f.slot);
    if (writer.backlog > WRITER_BACKLOG) await writer.flush();
  };

  /** Writes the oldest debug lines that are paired, or waited long enough (everything at the end). */
  const drain = async (now: number | null, all: boolean) => {
    while (pending.length > 0) {
      const head = pending[0];
      if (!head.paired && !all && pending.length <= PAIR_MAX_PENDING && (now === null || now - head.t <= PAIR_WINDOW_MS)) return;
      pending.shift();
      if (!head.paired) unpaired.get(head.f.slot)?.shift();
      await emit(head);
    }
  };

  const lines = createInterface({ input, crlfDelay: Infinity });
  let lastProgress = 0;
  try {
    for await (const raw of lines) {
      lineNo++;
      const line = lineNo === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      const l = parseLogLine(line, tz);
      if (settingsText !== null) {
        // The "Overridden settings:" dict goes on over the lines that start no record of their own.
        if (l.kind === 'other') {
          settingsText += `\n${line}`;
          if (bracketsBalanced(settingsText)) {
            applyOverridden(settingsText);
            settingsText = null;
          }
          continue;
        }
        applyOverridden(settingsText);
        settingsText = null;
      }
      switch (l.kind) {
        case 'debug': {
          const t: number | null = l.time ?? lastTime;
          if (t === null) {
            bad('no timestamp on this line or any line before it', line);
            break;
          }
          lastTime = t;
          firstTime ??= t;
          const p: Pending = { t, f: l.fields, message: l.message, status: null, method: '', url: '', paired: false };
          pending.push(p);
          let q = unpaired.get(l.fields.slot);
          if (!q) unpaired.set(l.fields.slot, (q = []));
          q.push(p);
          break;
        }
        case 'unreadable':
          if (l.time !== null) lastTime = l.time;
          bad(l.reason, line);
          break;
        case 'record': {
          if (l.time !== null) {
            lastTime = l.time;
            firstTime ??= l.time;
          }
          const m = l.message;
          const resp = parseResponseMessage(m);
          if (resp) {
            const p = resp.cached ? undefined : pairFor(resp.url);
            if (p) {
              p.status = resp.status;
              p.method = resp.method;
              p.url = resp.url;
              p.paired = true;
            }
          } else if (m.startsWith('Overridden settings:')) {
            settingsTime = l.time ?? lastTime;
            const rest = m.slice('Overridden settings:'.length);
            if (rest.trim() !== '' && bracketsBalanced(rest)) applyOverridden(rest);
            else settingsText = rest;
          } else if (m === 'Spider opened') {
            openedAt ??= l.time;
          } else if (m.startsWith('Spider closed (')) {
            closedAt = l.time ?? lastTime;
            finishReason = /^Spider closed \((.*)\)$/.exec(m)?.[1] ?? null;
          } else if (scrapyVersion === null && /^Scrapy \S+ started/.test(m)) {
            scrapyVersion = /^Scrapy (\S+) started/.exec(m)![1];
          } else if ((l.level === 'WARNING' || l.level === 'ERROR' || l.level === 'CRITICAL') && lastTime !== null) {
            const e: EventRecord = {
              t: l.time ?? lastTime, slot: null, kind: l.level === 'WARNING' ? 'warning' : 'error', code: 'scrapy-log',
              text: `${l.logger ? `[${l.logger}] ` : ''}${m.length > 2000 ? `${m.slice(0, 1997)}...` : m}`,
            };
            if (crawlId !== null) writer.recordEvent(crawlId, e);
            else if (earlyEvents.length < 1000) earlyEvents.push(e);
          }
          break;
        }
        case 'other':
          break;
      }
      await drain(lastTime, false);
      if (writeError) throw writeError;
      if (o.onProgress) {
        const now = Date.now();
        if (now - lastProgress >= 100) {
          lastProgress = now;
          o.onProgress({ bytes: src.bytesRead(), size, lines: lineNo });
        }
      }
    }
    if (settingsText !== null) applyOverridden(settingsText);
    await drain(lastTime, true);
    if (crawlId !== null) {
      const startedAt = openedAt ?? firstTime;
      const finishedAt = closedAt ?? lastTime;
      const summary = {
        crawl_id: crawlId, requests: debugLines, responses: withStatus, failures: 0, slots: slots.size,
        seconds: startedAt !== null && finishedAt !== null ? Math.max(0, (finishedAt - startedAt) / 1000) : 0,
        imported_from: { kind: 'scrapy-log', file, scrapy_version: scrapyVersion, finish_reason: finishReason, lines: lineNo, unreadable_lines: unreadable },
      };
      writer.updateCrawl(crawlId, { status: 'finished', startedAt, finishedAt, summary, settings });
    }
    await writer.flush();
    o.onProgress?.({ bytes: size, size, lines: lineNo });
    return {
      crawlId, name, lines: lineNo, debugLines, withStatus, slots: slots.size, unreadable, firstUnreadable, scrapyVersion,
      settingsApplied, settingsIgnored, settingsSkipped, startedAt: openedAt ?? firstTime, finishedAt: closedAt ?? lastTime,
    };
  } finally {
    lines.close();
    writer.off('error', onWriteError);
  }
}
