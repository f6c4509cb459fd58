// Scripted bodies of the test site (scenario `bodies`): huge pages, deeply nested markup, gzip
// bombs, big robots.txt files, other charsets. Planned once as parts repeated while they are sent.

import { brotliCompressSync, constants, crc32, deflateRawSync } from 'node:zlib';
import type { BodySpec } from './scenario';

/** One part of a body: `bytes`, written `times` times in a row. */
export interface BodyPart {
  readonly bytes: Buffer;
  readonly times: number;
}

/** A body ready to send: status, flat header list, parts in order. */
export interface BodyPlan {
  readonly status: number;
  readonly headers: readonly string[];
  readonly parts: readonly BodyPart[];
  /** Bytes on the wire (after compression). */
  readonly wireBytes: number;
  /** Bytes before compression (the `bytes` of the spec, rounded down to whole `fill`s). */
  readonly bytes: number;
}

/** Size of one written piece of an identity body, and of a compressed block's input. */
const WRITE_BYTES = 64 * 1024;
const COMPRESS_BLOCK_BYTES = 1024 * 1024;

function bytesOf(text: string, base64: boolean): Buffer {
  return base64 ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
}

/** `unit` repeated `n` times. */
function repeat(unit: Buffer, n: number): Buffer {
  return n <= 0 ? Buffer.alloc(0) : Buffer.concat(Array.from({ length: n }, () => unit));
}

/** Adler-32 of `buf`, continuing from `adler` (RFC 1950). */
function adler32(buf: Buffer, adler = 1): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  let i = 0;
  while (i < buf.length) {
    const end = Math.min(buf.length, i + 3800); // keeps b below 2^53 between reductions
    for (; i < end; i++) {
      a += buf[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Adler-32 of A followed by B, from adler(A), adler(B) and B's length (zlib's adler32_combine). */
function adler32Combine(adler1: number, adler2: number, len2: number): number {
  const BASE = 65521;
  const rem = len2 % BASE;
  let sum1 = adler1 & 0xffff;
  let sum2 = (rem * sum1) % BASE;
  sum1 += (adler2 & 0xffff) + BASE - 1;
  sum2 += (adler1 >>> 16) + (adler2 >>> 16) + BASE - rem;
  sum1 %= BASE;
  sum2 %= BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}

/** Raw deflate of `buf` ending on a full flush: independent of what precedes it, so blocks can be repeated. */
function deflateBlock(buf: Buffer): Buffer {
  return buf.length === 0 ? Buffer.alloc(0) : deflateRawSync(buf, { finishFlush: constants.Z_FULL_FLUSH });
}

/** Plans the answer of a scripted body; `extra` are the host's extra headers (the body's own win). */
export function planBody(spec: BodySpec, extra: readonly string[]): BodyPlan {
  const head = bytesOf(spec.head, spec.base64);
  const fill = bytesOf(spec.fill, spec.base64);
  const tail = bytesOf(spec.tail, spec.base64);
  const fills = Math.floor((spec.bytes - head.length - tail.length) / fill.length);
  const bytes = head.length + fills * fill.length + tail.length;
  const compressed = spec.encoding === 'gzip' || spec.encoding === 'deflate';
  const perBlock = Math.max(1, Math.floor((compressed ? COMPRESS_BLOCK_BYTES : WRITE_BYTES) / fill.length));
  const block = repeat(fill, Math.min(perBlock, fills));
  const blocks = block.length === 0 ? 0 : Math.floor(fills / perBlock);
  const rest = repeat(fill, fills - blocks * perBlock);
  // The body as it is before compression: head, `blocks` times block, rest, tail.
  const plain: BodyPart[] = [
    { bytes: head, times: 1 },
    { bytes: block, times: blocks },
    { bytes: rest, times: 1 },
    { bytes: tail, times: 1 },
  ];
  let parts: BodyPart[];
  if (spec.encoding === 'identity') {
    parts = plain;
  } else if (spec.encoding === 'br') {
    parts = [{ bytes: brotliCompressSync(Buffer.concat(plain.flatMap((p) => Array.from({ length: p.times }, () => p.bytes))), {
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: bytes },
    }), times: 1 }];
  } else {
    const cblock = deflateBlock(block);
    // Many copies of a small compressed block go out as one write.
    const group = Math.max(1, Math.floor(WRITE_BYTES / Math.max(1, cblock.length)));
    const deflated: BodyPart[] = [
      { bytes: deflateBlock(head), times: 1 },
      { bytes: repeat(cblock, Math.min(group, blocks)), times: Math.floor(blocks / group) },
      { bytes: cblock, times: blocks % group },
      { bytes: deflateBlock(rest), times: 1 },
      { bytes: deflateBlock(tail), times: 1 },
      { bytes: deflateRawSync(Buffer.alloc(0)), times: 1 }, // the final (empty) block
    ];
    if (spec.encoding === 'gzip') {
      let crc = crc32(head);
      for (let i = 0; i < blocks; i++) crc = crc32(block, crc);
      crc = crc32(tail, crc32(rest, crc));
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(crc >>> 0, 0);
      trailer.writeUInt32LE(bytes % 2 ** 32, 4);
      parts = [{ bytes: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]), times: 1 }, ...deflated, { bytes: trailer, times: 1 }];
    } else {
      const blockAdler = adler32(block);
      let adler = adler32(head);
      for (let i = 0; i < blocks; i++) adler = adler32Combine(adler, blockAdler, block.length);
      adler = adler32(tail, adler32(rest, adler));
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32BE(adler, 0);
      parts = [{ bytes: Buffer.from([0x78, 0x9c]), times: 1 }, ...deflated, { bytes: trailer, times: 1 }];
    }
  }
  parts = parts.filter((p) => p.times > 0 && p.bytes.length > 0);
  const wireBytes = parts.reduce((n, p) => n + p.bytes.length * p.times, 0);
  const own: string[] = [];
  if (spec.content_type !== '') own.push('Content-Type', spec.content_type);
  if (spec.encoding !== 'identity') own.push('Content-Encoding', spec.encoding);
  const ownNames = new Set(own.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
  const headers: string[] = [];
  for (let i = 0; i < extra.length; i += 2) if (!ownNames.has(extra[i].toLowerCase())) headers.push(extra[i], extra[i + 1]);
  headers.push(...own);
  if (spec.content_length) headers.push('Content-Length', String(wireBytes));
  return { status: spec.status, headers, parts, wireBytes, bytes };
}
