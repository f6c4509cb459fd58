// Extracts followable links from an HTML page (htmlparser2, streaming, tolerant of bad HTML),
// honouring <base href>.

import { Parser } from 'htmlparser2';

const LINK_TAGS: Readonly<Record<string, string>> = { a: 'href', area: 'href', frame: 'src', iframe: 'src' };

/** Absolute http(s) URLs linked from `html`, resolved against the page URL (or its <base>). */
export function extractLinks(html: string, pageUrl: string): string[] {
  const raw: string[] = [];
  let base = pageUrl;
  let sawBase = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'base' && !sawBase && attrs.href) {
          sawBase = true;
          try {
            base = new URL(attrs.href, pageUrl).href;
          } catch {
            /* keep the page URL */
          }
          return;
        }
        const attr = LINK_TAGS[name];
        if (attr) {
          const v = attrs[attr];
          if (v && (name !== 'a' || !/\bnofollow\b/i.test(attrs.rel ?? ''))) raw.push(v.trim());
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const out: string[] = [];
  for (const href of raw) {
    if (href === '' || href.startsWith('#') || /^(javascript|mailto|tel|data):/i.test(href)) continue;
    try {
      const u = new URL(href, base);
      if (u.protocol === 'http:' || u.protocol === 'https:') out.push(u.href);
    } catch {
      /* not a URL */
    }
  }
  return out;
}

/** True for HTML content types (or none given). */
export function isHtml(contentType: string | null): boolean {
  return contentType === null || /^\s*(text\/html|application\/xhtml\+xml)/i.test(contentType);
}
