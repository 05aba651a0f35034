/** What one site source may reach, and how often a schedule syncs it. */

/** Pages one sync of a site may find. */
export const MAX_SITE_PAGES = 2000;
export const DEFAULT_SITE_PAGES = 200;
export const DEFAULT_SITE_DEPTH = 3;

/** A schedule's period, in seconds. */
export const SCHEDULE_SECONDS = { hourly: 3600, daily: 86_400, weekly: 604_800 } as const;

/**
 * The crawler's name, which robots.txt groups address (`User-agent: rag-service-crawler`); the
 * full header adds where to read about it. Documented in the README's Sources section.
 */
export const CRAWLER_TOKEN = 'rag-service-crawler';
export const CRAWLER_USER_AGENT = `${CRAWLER_TOKEN}/1.0 (+https://github.com/rag-service/rag-service#sources)`;

/** A page seen gone (404, 410, or no longer linked) by this many syncs in a row is removed. */
export const GONE_AFTER_SYNCS = 2;

/** Errors kept per run, each with its URL. */
export const MAX_RUN_ERRORS = 100;
