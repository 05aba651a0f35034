-- Identical chunks are embedded once (issue 21). A chunk whose heading path and text are those of an earlier
-- chunk read in the same extract step names that chunk: the embed batch of the earlier one writes this one's
-- vector too, with the same values (its own id and metadata), and only then marks the earlier one done. A
-- workbook or text that repeats itself thousands of times costs one embedding per distinct text.
alter table public.document_chunks add column same_as integer;
-- The copies of a batch's chunks, found by the batch (partial: a document without copies pays nothing).
create index document_chunks_same_as_idx on public.document_chunks (document_id, same_as) where same_as is not null;
