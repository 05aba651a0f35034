-- What the asker thought of an answer (issue 23): thumbs up or down, with an optional comment, on the answer's
-- evaluation record. Null until rated; a rating taken back is null again.
alter table evaluations
  add column feedback text check (feedback in ('up', 'down')),
  add column feedback_comment text,
  add column feedback_at timestamptz,
  add constraint evaluations_feedback_comment_rated check (feedback_comment is null or feedback is not null);
