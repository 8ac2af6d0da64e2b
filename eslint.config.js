// The JavaScript's lint, at ESLint's recommended rules. Each folder gets the
// globals of where its code runs: the page in a browser, the service worker
// and the bench's Workers in their own scopes, the rest (tests, plugins,
// scripts, benches) in Node.
import js from "@eslint/js";
import globals from "globals";

export default [
  // Third-party code, kept as published; and what builds and tests leave.
  { ignores: ["public/vendor/", "build/", "target/", "node_modules/", ".wrangler/", "bench/results/", "dist/"] },
  js.configs.recommended,
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { ecmaVersion: "latest", sourceType: "module", globals: globals.node },
  },
  { files: ["public/**/*.js"], languageOptions: { globals: globals.browser } },
  // The npm package's launchers: CommonJS, for any Node that npm installs them under.
  { files: ["npm/**/*.js"], languageOptions: { sourceType: "commonjs" } },
  { files: ["public/sw.js"], languageOptions: { sourceType: "module", globals: globals.serviceworker } },
  { files: ["bench/fair/*.js", "bench/floor/*.js", "bench/meter/*.js"], languageOptions: { globals: globals.serviceworker } },
  // Node files that drive Chromium: the functions they hand to page.evaluate
  // run in the page or in its service worker (sw.js's own are on self.needsYou).
  {
    files: ["tests/page/*.js", "tests/answers/screen.test.js", "bench/page.mjs", "bench/page-sealed.mjs", "bench/screen.mjs"],
    languageOptions: {
      globals: { ...globals.browser, ...globals.serviceworker },
    },
  },
];
