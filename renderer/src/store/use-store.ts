// The only way views read live stores: useSyncExternalStore with a narrow selector, so a component
// re-renders only when the slice it selected changed (by `isEqual`), not on every frame of data.

import { useRef, useSyncExternalStore } from 'react';
import type { ReadableStore } from './frame-store';

interface Cached<S, T> {
  readonly version: number;
  readonly select: (store: S) => T;
  readonly value: T;
}

/**
 * Reads `select(store)`. The value is recomputed when the store's version or the selector changes,
 * and the previous value is kept (same reference) while `isEqual` says nothing changed.
 */
export function useStore<S extends ReadableStore, T>(store: S, select: (store: S) => T, isEqual: (a: T, b: T) => boolean = Object.is): T {
  const cache = useRef<Cached<S, T> | null>(null);
  const getSnapshot = (): T => {
    const version = store.getVersion();
    const c = cache.current;
    if (c && c.version === version && c.select === select) return c.value;
    const next = select(store);
    const value = c && isEqual(c.value, next) ? c.value : next;
    cache.current = { version, select, value };
    return value;
  };
  return useSyncExternalStore(store.subscribe, getSnapshot, getSnapshot);
}

/** Element-wise equality of two arrays (`Object.is` per element). */
export function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
