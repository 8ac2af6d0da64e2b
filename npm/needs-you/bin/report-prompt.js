#!/usr/bin/env node
// `report-prompt`, from npm: runs this platform's native binary
// (lib/launch.js). Hooks never come through here: the installers write the
// native binary's own path, and `needs-you run` hands the plugins that path
// in NEEDS_YOU_REPORTER.
require("../lib/launch.js").launch("report-prompt");
