-- What pdf.js has decompressed for a job's document over its extract steps: each step adds its
-- share, and the document stops once the total passes its decoding budget (src/core/limits.ts).
alter table ingest_jobs add column decoded_bytes bigint not null default 0;
