// Where the pinned agent CLIs live (installed by scripts/setup-live.sh), and
// whether they are there.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const LIVE = process.env.NEEDS_YOU_LIVE_DIR || join(homedir(), ".cache", "needs-you", "live");
export const CLAUDE = join(LIVE, "npm", "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe");
export const has = (path) => existsSync(path);
export const CODEX = join(LIVE, "npm", "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex");
export const OPENCODE = join(LIVE, "npm", "node_modules", "opencode-linux-x64", "bin", "opencode");
/** A folder holding @opencode-ai/plugin installed by npm, to copy into OpenCode's config folder. */
export const OPENCODE_PLUGIN_DIR = join(LIVE, "opencode-plugin");
export const HERMES = join(LIVE, "hermes-venv", "bin", "hermes");
/** GitHub Copilot CLI's own binary (its npm package's launcher only finds and runs it). */
export const COPILOT = join(LIVE, "npm", "node_modules", "@github", "copilot-linux-x64", "copilot");
/** Gemini CLI, as npm puts it on the PATH (node runs its bundle). */
export const GEMINI = join(LIVE, "npm", "node_modules", ".bin", "gemini");
