// The entry the app imports, eagerly or with lazy() (hence the default export), and the stylesheet.
// The component is in render.ts, which the unit tests can import.
import './markdown.css';

export { Markdown, Markdown as default } from './render.ts';
