// The wire as the instrument (issue 17): tcpdump captures the requests arriving at a port on the
// loopback interface, and a small pcap reader turns the capture into (time, Host, request target)
// rows: a request's arrival is the timestamp of the first data segment carrying its request line.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';

/** One HTTP request seen on the wire. */
export interface WireRequest {
  /** Capture timestamp, ms since the epoch (nanosecond precision where the capture has it). */
  readonly t: number;
  /** The Host header, without its port, lower-cased ('' when the segment has none). */
  readonly host: string;
  /** The request target of the request line. */
  readonly path: string;
  readonly method: string;
}

export interface Capture {
  /** Stops tcpdump (SIGINT, so it flushes) and reads the capture. */
  stop(): Promise<WireRequest[]>;
  /** What tcpdump said about its packets ("N packets captured … dropped by kernel"). */
  readonly summary: () => string;
}

/**
 * Starts tcpdump on the loopback interface for TCP segments with a payload sent to `port` (and to
 * addresses in `dstNet`, e.g. `127.0.105.0/24`, when given), into `file`; resolves once it listens,
 * or with a reason when it cannot run (not installed, not root).
 */
export function startCapture(port: number, file: string, dstNet?: string): Promise<Capture | { readonly error: string }> {
  // Only segments to the port that carry data: the IP total length minus both headers is not 0.
  const filter = `tcp dst port ${port}${dstNet ? ` and dst net ${dstNet}` : ''} and (((ip[2:2] - ((ip[0]&0xf)<<2)) - ((tcp[12]&0xf0)>>2)) != 0)`;
  let proc: ChildProcess;
  try {
    proc = spawn('tcpdump', ['-i', 'lo', '-n', '-s', '1024', '--immediate-mode', '--time-stamp-precision=nano', '-U', '-w', file, filter],
      { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    return Promise.resolve({ error: `tcpdump could not start: ${(e as Error).message}` });
  }
  let stderr = '';
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: Capture | { error: string }) => {
      if (!settled) {
        settled = true;
        resolve(v);
      }
    };
    proc.on('error', (e) => done({ error: `tcpdump could not start: ${e.message} (apt-get install tcpdump; it needs root or CAP_NET_RAW)` }));
    proc.on('exit', (code) => done({ error: `tcpdump exited (code ${code}): ${stderr.trim()}` }));
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (d: string) => {
      stderr += d;
      if (/listening on/.test(stderr)) {
        done({
          summary: () => stderr.split('\n').filter((l) => /packets/.test(l)).join('; '),
          stop: async () => {
            // SIGINT ends tcpdump's loop at once, dropping what the kernel still holds for it: wait
            // until the file has stopped growing (tcpdump -U writes each packet as it reads it).
            await settleFile(file);
            return new Promise<WireRequest[]>((res, rej) => {
              proc.once('exit', () => {
                try {
                  res(readWireRequests(readFileSync(file)));
                } catch (e) {
                  rej(e);
                }
              });
              proc.kill('SIGINT');
            });
          },
        });
      }
    });
  });
}

/** Resolves once `file` has kept its size for 150 ms (at least 200 ms after the call, at most 3 s). */
async function settleFile(file: string): Promise<void> {
  const size = () => {
    try {
      return statSync(file).size;
    } catch {
      return -1;
    }
  };
  const start = Date.now();
  let last = size();
  let stableSince = Date.now();
  while (Date.now() - start < 3000) {
    await new Promise((r) => setTimeout(r, 50));
    const now = size();
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 150 && Date.now() - start >= 200) return;
  }
}

const METHOD = /^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH) (\S+) HTTP\/1\.[01]\r\n/;

/** Reads a classic pcap file (micro- or nanosecond timestamps; Ethernet, Linux cooked, raw IP or BSD loopback links). */
export function readWireRequests(buf: Buffer): WireRequest[] {
  if (buf.length < 24) throw new Error('not a pcap file: shorter than its header');
  const magicLE = buf.readUInt32LE(0);
  let le: boolean;
  let nano: boolean;
  if (magicLE === 0xa1b2c3d4 || magicLE === 0xa1b23c4d) {
    le = true;
    nano = magicLE === 0xa1b23c4d;
  } else {
    const magicBE = buf.readUInt32BE(0);
    if (magicBE !== 0xa1b2c3d4 && magicBE !== 0xa1b23c4d) throw new Error(`not a pcap file (magic ${magicLE.toString(16)}; pcapng is not read)`);
    le = false;
    nano = magicBE === 0xa1b23c4d;
  }
  const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const linktype = u32(20);
  const out: WireRequest[] = [];
  for (let o = 24; o + 16 <= buf.length; ) {
    const sec = u32(o);
    const frac = u32(o + 4);
    const incl = u32(o + 8);
    const data = o + 16;
    o = data + incl;
    if (o > buf.length) break; // a record cut by the end of the capture
    const t = sec * 1000 + (nano ? frac / 1e6 : frac / 1e3);
    const ip = linkPayload(buf, data, incl, linktype);
    if (ip < 0) continue;
    const tcp = transportOffset(buf, ip, data + incl);
    if (tcp < 0) continue;
    const payload = tcp + ((buf[tcp + 12] >> 4) * 4);
    if (payload >= data + incl) continue;
    const text = buf.toString('latin1', payload, data + incl);
    const m = METHOD.exec(text);
    if (!m) continue;
    const h = /\r\nhost:[ \t]*([^\r\n]*)/i.exec(text);
    const host = h ? h[1].trim().toLowerCase().replace(/:\d+$/, '') : '';
    out.push({ t, host, path: m[2], method: m[1] });
  }
  return out;
}

/** Offset of the IP header inside a captured frame, or −1. */
function linkPayload(buf: Buffer, at: number, len: number, linktype: number): number {
  switch (linktype) {
    case 1: { // Ethernet
      if (len < 14) return -1;
      const type = buf.readUInt16BE(at + 12);
      return type === 0x0800 || type === 0x86dd ? at + 14 : -1;
    }
    case 113: // Linux cooked capture
      return len >= 16 ? at + 16 : -1;
    case 276: // Linux cooked capture v2
      return len >= 20 ? at + 20 : -1;
    case 0: // BSD loopback
      return len >= 4 ? at + 4 : -1;
    case 12: case 101: // raw IP
      return at;
    default:
      return -1;
  }
}

/** Offset of the TCP header after an IPv4 or IPv6 header, or −1. */
function transportOffset(buf: Buffer, ip: number, end: number): number {
  const version = buf[ip] >> 4;
  if (version === 4) {
    if (buf[ip + 9] !== 6) return -1;
    const tcp = ip + (buf[ip] & 0x0f) * 4;
    return tcp + 20 <= end ? tcp : -1;
  }
  if (version === 6) {
    if (buf[ip + 6] !== 6) return -1; // no extension headers on loopback
    const tcp = ip + 40;
    return tcp + 20 <= end ? tcp : -1;
  }
  return -1;
}
