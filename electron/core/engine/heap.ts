// An indexed binary min-heap of slots by the time they may next start a request: one timer
// for thousands of waiting slots, with O(log n) re-keying when a slot's delay changes.

export interface HeapItem {
  heapIndex: number;
  heapKey: number;
}

export class IndexedHeap<T extends HeapItem> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(item: T): boolean {
    return item.heapIndex >= 0;
  }

  /** Inserts the item, or moves it if it is already in the heap. */
  set(item: T, key: number): void {
    if (item.heapIndex >= 0) {
      const old = item.heapKey;
      item.heapKey = key;
      if (key < old) this.up(item.heapIndex);
      else this.down(item.heapIndex);
      return;
    }
    item.heapKey = key;
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0) return;
    const last = this.items.pop()!;
    item.heapIndex = -1;
    if (last !== item) {
      this.items[i] = last;
      last.heapIndex = i;
      this.up(i);
      this.down(last.heapIndex);
    }
  }

  /** Every item, in no particular order (for re-keying after a settings change). */
  all(): readonly T[] {
    return this.items;
  }

  private up(i: number): void {
    const items = this.items;
    const item = items[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p];
      if (parent.heapKey <= item.heapKey) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && items[r].heapKey < items[l].heapKey ? r : l;
      if (items[c].heapKey >= item.heapKey) break;
      items[i] = items[c];
      items[i].heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
