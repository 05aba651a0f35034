import { useMutation } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { call, rag, type Schema } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { Thumb } from './thumb.tsx';

type Rating = Schema<'FeedbackRequest'>['feedback'];

/** Thumbs up or down on an answer, with an optional comment; pressing the chosen one again takes it back. */
export function Feedback({ evaluationId, initial }: { evaluationId: string; initial: Rating }) {
  const [rating, setRating] = useState<Rating>(initial);
  const [commenting, setCommenting] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (body: Schema<'FeedbackRequest'>) =>
      call(rag.PUT('/query/answers/{evaluation_id}/feedback', { params: { path: { evaluation_id: evaluationId } }, body })),
  });

  function rate(next: 'up' | 'down') {
    const chosen = rating === next ? null : next;
    save.mutate(
      { feedback: chosen },
      {
        onSuccess: () => {
          setRating(chosen);
          setCommenting(chosen !== null);
          setSent(chosen === null ? 'Rating taken back.' : 'Thanks: your rating is saved.');
        },
      },
    );
  }

  return (
    <div class="feedback">
      <div class="row tight">
        <button type="button" class="icon" aria-pressed={rating === 'up'} aria-label="Good answer" onClick={() => rate('up')}>
          <Thumb />
        </button>
        <button type="button" class="icon" aria-pressed={rating === 'down'} aria-label="Bad answer" onClick={() => rate('down')}>
          <Thumb down />
        </button>
        <span role="status" class="hint">
          {sent}
        </span>
      </div>
      {commenting && rating && (
        <form
          class="row"
          onSubmit={(event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const comment = String(new FormData(form).get('comment')).trim();
            save.mutate(
              { feedback: rating, comment: comment || null },
              {
                onSuccess: () => {
                  setCommenting(false);
                  setSent('Thanks: your comment is saved.');
                },
              },
            );
          }}
        >
          <label class="grow">
            {rating === 'down' ? 'What was wrong? (optional)' : 'Anything to add? (optional)'}
            <input name="comment" maxLength={2000} autocomplete="off" />
          </label>
          <button type="submit" class="secondary" disabled={save.isPending}>
            Send
          </button>
        </form>
      )}
      <Failure error={save.error} />
    </div>
  );
}
