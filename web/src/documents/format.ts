import type { Doc, Job } from './api.ts';

export const sizeText = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** An upload under way: "2 KB of 40.0 MB". */
export const sentText = (sent: number, size: number) => `${sizeText(sent)} of ${sizeText(size)}`;

export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export const indexingText = (job: Job) => `Indexing: ${job.chunks_processed} of ${job.chunks_total} chunks`;

export const typeLabel = (doc: Doc) => doc.type?.toUpperCase() ?? (doc.source_kind === 'url' ? 'Web page' : '—');

/** A document's own date is a day, not a moment: read in UTC, so that no time zone moves it to the day before. */
export const dayText = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
