-- Nothing stays stuck (issue 9): a job whose QStash messages were all lost (an outage longer than the
-- retries) and an answer whose scoring was never queued are picked up again by the workers' cron
-- sweeps. Each pick-up is counted; past a few, the job fails and the evaluation records an error.
alter table public.ingest_jobs add column sweeps integer not null default 0;
alter table public.evaluations add column sweeps integer not null default 0;
create index ingest_jobs_unfinished_idx on public.ingest_jobs (updated_at) where status in ('queued', 'processing');
create index evaluations_unscored_idx on public.evaluations (created_at) where scored_at is null;
