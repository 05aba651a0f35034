-- Invite links hardened (issue 9): tokens stored only as their SHA-256, optional expiry and
-- maximum uses, and removals remembered so that a removed member cannot come back through a
-- link made before the removal.

-- The token is 256 random bits, so a plain SHA-256 (no salt, no slow hash) cannot be reversed
-- or guessed; a leaked table no longer holds working links. The first characters stay in
-- clear only so that owners can tell their links apart.
alter table public.collection_shares
  add column token_hash text,
  add column token_prefix text,
  add column expires_at timestamptz,
  add column max_uses integer check (max_uses is null or max_uses >= 1),
  add column uses integer not null default 0 check (uses >= 0);

-- Existing links keep working: the hash of the UTF-8 token, lower-case hex, as the API computes it.
update public.collection_shares
   set token_hash = encode(sha256(convert_to(share_token, 'UTF8')), 'hex'),
       token_prefix = left(share_token, 6);

alter table public.collection_shares
  alter column token_hash set not null,
  alter column token_prefix set not null,
  add constraint collection_shares_token_hash_key unique (token_hash),
  -- Joins count a use with `update … where uses < max_uses`; this makes an overrun impossible anyway.
  add constraint collection_shares_uses_within_max check (max_uses is null or uses <= max_uses),
  drop column share_token;

-- The latest removal of each user from each collection. A join through a link created at or
-- before removed_at is refused; a link the owner creates afterwards works. Rows go with the
-- collection or the user.
create table public.collection_removals (
  collection_id uuid not null references public.collections (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  removed_at timestamptz not null default now(),
  primary key (collection_id, user_id)
);
alter table public.collection_removals enable row level security;
