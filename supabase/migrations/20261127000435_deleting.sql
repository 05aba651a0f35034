-- Deletion is seen first (issue 21). A document or collection is marked before its vectors and files go,
-- and its row is deleted last, so that a failure part-way leaves the row for a retried DELETE to finish.
-- An ingest step that upserts vectors reads the mark afterwards and takes back what it wrote; without it, a
-- step that upserted while the files were being removed saw the row still there and kept vectors that nothing
-- could remove once the row had gone. A marked row is neither listed nor searched.
alter table public.documents add column deleting_at timestamptz;
alter table public.collections add column deleting_at timestamptz;
