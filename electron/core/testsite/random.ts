// Small seeded randomness for the test site, so a scenario with a seed replays the same
// jitter, error draws and filler text on every run (tests and benchmarks stay comparable).

/** A uniform random source in [0, 1). */
export type Random = () => number;

/** mulberry32: a tiny, fast 32-bit PRNG; good enough for test traffic, not for secrets. */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a 32-bit hash of a string, used to derive independent per-host seeds. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A PRNG for one named stream (`host`, `purpose`) of a scenario seed. */
export function streamRandom(seed: number, host: string, purpose: string): Random {
  return mulberry32((hashString(`${host}\u0000${purpose}`) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0);
}
