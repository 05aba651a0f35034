-- The quota reservation as one statement (issue 9's load run). As a client-side transaction it
-- took six round trips while holding the user's advisory lock (and, on the devstack's PGlite, the
-- database's only session), which capped ingestion near 14 documents a second. In PL/pgSQL each
-- statement takes a fresh snapshot, so the sum read after the lock sees every committed grant.
create function public.reserve_ingest_chunks(
  p_user_id uuid, p_job_id uuid, p_range_start integer, p_wanted integer, p_quota integer
) returns integer
language plpgsql
set search_path = public, pg_temp
as $$
declare
  earlier integer;
  used integer;
  granted integer;
begin
  perform pg_advisory_xact_lock(hashtextextended('ingest_usage:' || p_user_id::text, 0));
  select chunks into earlier from ingest_usage where job_id = p_job_id and range_start = p_range_start;
  if found then
    return earlier;
  end if;
  select coalesce(sum(chunks), 0)::int into used from ingest_usage
   where user_id = p_user_id and day = (now() at time zone 'utc')::date;
  granted := greatest(0, least(p_wanted, p_quota - used));
  insert into ingest_usage (job_id, range_start, user_id, chunks) values (p_job_id, p_range_start, p_user_id, granted);
  return granted;
end;
$$;

-- Only the service's own connection calls it; nothing reaches it through the Data API.
revoke all on function public.reserve_ingest_chunks(uuid, uuid, integer, integer, integer) from public;
