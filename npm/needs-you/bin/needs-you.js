#!/usr/bin/env node
// `needs-you`, from npm: runs this platform's native binary (lib/launch.js).
require("../lib/launch.js").launch("needs-you");
