-- The audit log (issue 25): security-relevant actions, one row each, written by the API after the action
-- succeeds. Append-only: no route changes or deletes a row, row-level security denies every client role, and
-- the trigger below refuses an UPDATE from anyone, the service included. The only DELETE is the ingest
-- worker's retention sweep (AUDIT_RETENTION_DAYS).
--
-- No foreign keys: an entry outlives its actor's key, its collection and its target (a deleted collection's
-- entries are what tells who deleted it).
create table public.audit_log (
  id uuid primary key default gen_random_uuid(),
  created_at timestamptz not null default now(),
  -- The user who acted (the key's owner when a key was used), and the key.
  actor_id uuid not null,
  api_key_id uuid,
  -- The request's X-Request-Id, and the client's address (CF-Connecting-IP) when there is one.
  request_id text not null check (char_length(request_id) <= 255),
  client_address text check (char_length(client_address) <= 64),
  action text not null check (action ~ '^[a-z_]+\.[a-z_]+$'),
  target_type text not null,
  target_id text not null,
  collection_id uuid,
  -- What changed: fields set, or {field: {from, to}}; never a key, secret, share token or password.
  diff jsonb not null default '{}'::jsonb check (jsonb_typeof(diff) = 'object')
);
-- GET /audit: a collection's entries, a user's own, everyone's; newest first. The retention sweep uses the last.
create index audit_log_collection_idx on public.audit_log (collection_id, created_at desc) where collection_id is not null;
create index audit_log_actor_idx on public.audit_log (actor_id, created_at desc);
create index audit_log_created_idx on public.audit_log (created_at desc);

create function public.audit_log_refuse_update() returns trigger language plpgsql set search_path = '' as $$
begin
  raise exception 'audit_log is append-only: entries are never changed';
end;
$$;
create trigger audit_log_append_only before update on public.audit_log
  for each row execute function public.audit_log_refuse_update();

alter table public.audit_log enable row level security;
