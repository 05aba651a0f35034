import { useEffect, useRef } from 'preact/hooks';
import type { Schema } from '../api.ts';
import { placeOf } from './place.ts';

/** A passage in its document: the neighbours before and after, the cited one marked and scrolled to. */
export function PassageView({ window }: { window: Schema<'PassageWindow'> }) {
  const cited = useRef<HTMLElement>(null);
  useEffect(() => cited.current?.scrollIntoView({ block: 'nearest' }), [window]);
  const { document } = window;
  return (
    <div class="stack passage-view">
      <p class="hint">
        {document.title ?? document.name}
        {document.document_date ? ` · ${document.document_date}` : ''}{' '}
        {document.open_url && (
          <a href={document.open_url} target="_blank" rel="noopener noreferrer">
            Open the document
          </a>
        )}
      </p>
      <ol class="plain passages">
        {window.passages.map((passage) => {
          const isCited = passage.chunk_index === window.chunk_index;
          const place = placeOf(passage);
          return (
            <li key={passage.chunk_index} class={isCited ? 'passage cited' : 'passage'}>
              {place && <p class="hint">{place}</p>}
              {isCited ? (
                <mark ref={cited} class="cited-passage">
                  {passage.text}
                </mark>
              ) : (
                <p>{passage.text}</p>
              )}
              {passage.image_url && (
                <img src={passage.image_url} alt={`The figure or page described, ${place || 'in the document'}`} />
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
