// The console's keyboard shortcuts: Space pauses or resumes the selected crawl and `/` focuses the
// slot filter, unless the key already means something where the focus is (typing, a button).

import { useEffect, useRef } from 'react';
import type { AppState } from './store/app-state';

/** The id of the slot table's filter box, which `/` focuses. */
export const SLOT_FILTER_ID = 'slot-filter';

/** The shortcuts, for titles and hints. */
export const SHORTCUTS = {
  togglePause: { key: 'Space', aria: 'Space', words: 'Space pauses or resumes the crawl' },
  focusFilter: { key: '/', aria: '/', words: '/ filters the slots' },
} as const;

const TYPING_INPUT_TYPES = new Set([
  'text', 'search', 'email', 'number', 'password', 'tel', 'url', 'date', 'datetime-local', 'month', 'time', 'week', 'color', 'file', 'range',
]);

/** True when keys typed now go into a field (input, textarea, select, contenteditable). */
export function isTypingTarget(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return TYPING_INPUT_TYPES.has(((el as HTMLInputElement).type || 'text').toLowerCase());
  return (el as HTMLElement).isContentEditable === true;
}

const SPACE_ROLES = new Set(['button', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'link']);

/** True when Space on this element does something of its own (presses a button, ticks a box). */
export function spaceActivates(el: Element | null): boolean {
  if (!el || el === document.body) return false;
  const tag = el.tagName;
  if (tag === 'BUTTON' || tag === 'SUMMARY' || (tag === 'A' && el.hasAttribute('href'))) return true;
  if (tag === 'INPUT') return true; // checkbox, radio, button, submit: Space acts on them too
  const role = el.getAttribute('role');
  return role !== null && SPACE_ROLES.has(role);
}

/** True while a modal dialog is open: shortcuts then wait. */
function modalOpen(): boolean {
  return document.querySelector('dialog[open]') !== null;
}

/** Focuses the slot filter, waiting up to a few frames for it to appear (after a tab switch). */
export function focusSlotFilter(framesLeft = 10): void {
  const el = document.getElementById(SLOT_FILTER_ID);
  if (el instanceof HTMLInputElement) {
    el.focus();
    el.select();
    return;
  }
  if (framesLeft > 0) requestAnimationFrame(() => focusSlotFilter(framesLeft - 1));
}

/**
 * Installs the shortcuts for the crawl shown: Space pauses a running crawl and resumes a paused
 * one; `/` calls `showSlots` (to bring the slot table up) and focuses its filter.
 */
export function useCrawlShortcuts(app: AppState, crawlId: number, showSlots: () => void): void {
  const latest = useRef({ crawlId, showSlots });
  latest.current = { crawlId, showSlots };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey || modalOpen()) return;
      const target = document.activeElement;
      if (isTypingTarget(target)) return;
      const { crawlId: id, showSlots: show } = latest.current;
      if (e.key === ' ' || e.code === 'Space') {
        if (spaceActivates(target)) return;
        e.preventDefault(); // no page scroll
        // Nothing is sent while the host is gone (the page says so; the buttons are off too).
        if (e.repeat || !app.stores.connection.online()) return;
        const status = app.stores.crawls.crawl(id)?.status;
        if (status === 'running') void app.commands.crawl('pause', id);
        else if (status === 'paused') void app.commands.crawl('resume', id);
      } else if (e.key === '/') {
        e.preventDefault(); // keep the '/' out of the field
        show();
        focusSlotFilter();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [app]);
}
