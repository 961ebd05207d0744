// Copies the engine's workflow schema into the extension (for the jsonValidation contribution).
// WORKRAIL_SCHEMA overrides the source (the packaging test builds a copy of this folder).
const fs = require("fs");
const path = require("path");

const source = process.env.WORKRAIL_SCHEMA || path.join(__dirname, "..", "..", "..", "workrail_engine", "schema", "workflow.schema.json");
const target = path.join(__dirname, "..", "schemas", "workflow.schema.json");
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(source, target);
console.log(`schema: ${source} -> ${target}`);
