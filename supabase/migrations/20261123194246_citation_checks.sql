-- Checked citations (issue 10): after each answer the scoring worker checks every [n] against
-- passage n. The checks go on the evaluation record, with their share as a score, and on the
-- answer's chat message, which now names its evaluation record.
alter table public.evaluations
  add column citation_support_score double precision check (citation_support_score between 0 and 1),
  add column citations jsonb;

alter table public.chat_messages
  add column evaluation_id uuid references public.evaluations (id) on delete set null,
  add column citations jsonb;
create index chat_messages_evaluation_idx on public.chat_messages (evaluation_id) where evaluation_id is not null;
