-- Collections, sharing and chat sessions. Users live in Supabase's auth.users;
-- every user-owned row cascades from it and every child row cascades from its
-- collection, so deleting either never leaves orphans behind.

create table public.collections (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 200),
  config jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index collections_user_id_idx on public.collections (user_id, created_at desc);

-- Invite links. Deleting a row revokes the link; members who joined through it stay.
create table public.collection_shares (
  id uuid primary key default gen_random_uuid(),
  collection_id uuid not null references public.collections (id) on delete cascade,
  share_token text not null unique,
  permission text not null check (permission in ('query', 'ingest')),
  created_by uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index collection_shares_collection_idx on public.collection_shares (collection_id, created_at);

-- The primary key makes a second join of the same user a no-op, however the joins race.
create table public.collection_members (
  collection_id uuid not null references public.collections (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  permission text not null check (permission in ('query', 'ingest')),
  share_id uuid references public.collection_shares (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (collection_id, user_id)
);
create index collection_members_user_idx on public.collection_members (user_id);

create table public.chat_sessions (
  id uuid primary key default gen_random_uuid(),
  collection_id uuid not null references public.collections (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  title text check (title is null or char_length(title) between 1 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chat_sessions_owner_idx on public.chat_sessions (collection_id, user_id, updated_at desc);

-- `position` orders messages written in the same transaction, where created_at ties.
create table public.chat_messages (
  id uuid primary key default gen_random_uuid(),
  session_id uuid not null references public.chat_sessions (id) on delete cascade,
  position bigint generated always as identity,
  role text not null check (role in ('user', 'assistant')),
  content text not null,
  sources jsonb not null default '[]'::jsonb,
  created_at timestamptz not null default now()
);
create index chat_messages_session_idx on public.chat_messages (session_id, position);

-- The service reaches Postgres as its owner through Hyperdrive; nothing here is
-- meant for PostgREST, so row-level security denies the anon and authenticated roles.
alter table public.collections enable row level security;
alter table public.collection_shares enable row level security;
alter table public.collection_members enable row level security;
alter table public.chat_sessions enable row level security;
alter table public.chat_messages enable row level security;
