// Vite's `?url` imports (vite/client declares them, but this project keeps the web app's types to its own).
declare module '*?url' {
  const url: string;
  export default url;
}
