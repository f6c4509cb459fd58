// A Scrapy crawl's settings under Slotscope's schema (the settings panel, what-if, exports), and
// which of them Scrapy can change while the spider runs: the rest are refused in words.

import { applySettings, DEFAULT_SETTINGS, settingSpec, type SettingName, type Settings } from '../../../shared/settings';

/** A Scrapy setting Slotscope keeps out of the crawl's settings, and why. */
export interface IgnoredSetting {
  readonly setting: string;
  readonly reason: string;
}

/**
 * The settings of a Scrapy crawl from the values the bridge read when the spider opened. Scrapy
 * has no backoff and does not obey Crawl-delay, so those are off (a what-if with the crawl's own
 * settings then gives back the delays Scrapy applied). A value the schema refuses keeps the default.
 */
export function settingsFromScrapy(given: Readonly<Record<string, unknown>>): { settings: Settings; ignored: IgnoredSetting[] } {
  let settings: Settings = { ...DEFAULT_SETTINGS, BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [], THROTTLING_ROBOTSTXT_OBEY: false };
  const ignored: IgnoredSetting[] = [];
  for (const [name, value] of Object.entries(given)) {
    if (!settingSpec(name)) {
      ignored.push({ setting: name, reason: 'Slotscope has no such setting' });
      continue;
    }
    const r = applySettings({ [name]: value }, settings);
    if (r.ok) settings = r.settings;
    else ignored.push({ setting: name, reason: r.errors.map((e) => e.message).join('; ') });
  }
  return { settings, ignored };
}

/** What the bridge can change in a running Scrapy crawl (slotscope_scrapy/steering.py _SETTERS). */
export const SCRAPY_LIVE_SETTINGS: readonly SettingName[] = [
  'DOWNLOAD_DELAY', 'RANDOMIZE_DOWNLOAD_DELAY', 'CONCURRENT_REQUESTS', 'CONCURRENT_REQUESTS_PER_DOMAIN', 'CONCURRENT_REQUESTS_PER_IP',
  'AUTOTHROTTLE_TARGET_CONCURRENCY', 'AUTOTHROTTLE_START_DELAY', 'AUTOTHROTTLE_MAX_DELAY', 'AUTOTHROTTLE_DEBUG', 'DOWNLOAD_SLOTS',
];

const READ_AT_OPEN: readonly SettingName[] = [
  'ROBOTSTXT_OBEY', 'DOWNLOAD_TIMEOUT', 'DOWNLOAD_MAXSIZE', 'DOWNLOAD_WARNSIZE', 'USER_AGENT', 'RETRY_ENABLED', 'RETRY_TIMES',
  'RETRY_HTTP_CODES', 'RETRY_PRIORITY_ADJUST',
];

/** Why Scrapy cannot change `name` while the spider runs; null when it can. */
export function scrapyRefusal(name: SettingName): string | null {
  if (SCRAPY_LIVE_SETTINGS.includes(name)) return null;
  if (name === 'AUTOTHROTTLE_ENABLED') {
    return `${name}: Scrapy builds its AutoThrottle extension once, when the crawl starts; it cannot be switched on or off while the spider runs`;
  }
  if (READ_AT_OPEN.includes(name)) {
    return `${name}: Scrapy's middlewares read it when the spider opens; it cannot change while the spider runs (set it in the spider's settings)`;
  }
  return `${name} is a setting of Slotscope's own engine; Scrapy has nothing it could change`;
}
