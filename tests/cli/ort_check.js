// Runs ONNX models with ONNX Runtime (the npm package onnxruntime-node) for testCliOnnx:
//
//   node ort_check.js NODE_MODULES_DIR < jobs.json > results.json
//
// jobs.json: [{"model": "a.onnx", "feeds": {NAME: {"type": "float32" | "int64" | "string",
//   "dims": [N, K], "data": [...]}}}, ...]; null in float data stands for NaN (JSON has none).
// results.json: one entry per job, in order: {"outputs": {NAME: {"type", "dims", "data"}}} with
// NaN written as null and int64 as numbers, or {"error": "..."} where ONNX Runtime refused the
// model or the inputs (the caller decides whether that is a failure). Exit 0 unless the jobs
// cannot be read or onnxruntime-node cannot be loaded (exit 2, the reason on stderr).
'use strict';
const fs = require('fs');
const path = require('path');

function fail(message) {
  process.stderr.write(`ort_check.js: ${message}\n`);
  process.exit(2);
}

if (process.argv.length < 3) fail('usage: node ort_check.js NODE_MODULES_DIR < jobs.json');
let ort;
try {
  ort = require(path.join(path.resolve(process.argv[2]), 'onnxruntime-node'));
} catch (e) {
  fail(`cannot load onnxruntime-node from ${process.argv[2]}: ${e.message}`);
}

function tensor(feed) {
  switch (feed.type) {
    case 'float32':
      return new ort.Tensor('float32', Float32Array.from(feed.data, (v) => (v === null ? NaN : v)),
                            feed.dims);
    case 'int64':
      return new ort.Tensor('int64', BigInt64Array.from(feed.data, (v) => BigInt(v)), feed.dims);
    case 'string':
      return new ort.Tensor('string', feed.data.map(String), feed.dims);
    default:
      throw new Error(`unknown input type ${feed.type}`);
  }
}

function plain(t) {
  const data = Array.from(t.data, (v) => {
    if (typeof v === 'bigint') return Number(v);
    return Number.isNaN(v) ? null : v;
  });
  return {type: t.type, dims: Array.from(t.dims), data};
}

async function main() {
  let jobs;
  try {
    jobs = JSON.parse(fs.readFileSync(0, 'utf8'));
  } catch (e) {
    fail(`cannot read the jobs from stdin: ${e.message}`);
  }
  const results = [];
  for (const job of jobs) {
    try {
      const session = await ort.InferenceSession.create(job.model, {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled'});
      const feeds = {};
      for (const [name, feed] of Object.entries(job.feeds)) feeds[name] = tensor(feed);
      const out = await session.run(feeds);
      const outputs = {};
      for (const [name, t] of Object.entries(out)) outputs[name] = plain(t);
      results.push({outputs});
      await session.release();
    } catch (e) {
      results.push({error: String(e && e.message ? e.message : e)});
    }
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((e) => fail(String(e && e.stack ? e.stack : e)));
