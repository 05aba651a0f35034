-- A question may search several collections at once (issue 22). Each exchange of a chat session says which
-- (null on messages recorded before: the session's own collection), and so does each evaluation record (empty
-- on records made before: its collection_id alone). A record over several is listed under its first one (or its
-- session's) and shown only to a participant of every one of them (src/core/db/evaluations.ts).
alter table public.chat_messages add column collection_ids uuid[];
alter table public.evaluations add column collection_ids uuid[] not null default '{}';
