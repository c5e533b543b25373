"""The ONNX checker over exported models, for testCliOnnx:

    python3 ort_onnx_info.py A.onnx [B.onnx ...]

Runs onnx.checker.check_model(full_check=True) on each file and prints one JSON object:
{file: {"metadata": {key: value}, "inputs": [names], "outputs": [names]}}. Exits 1 with the
checker's message naming the file when one fails, 77 when python3-onnx is not installed."""
import json
import sys

try:
    import onnx
except ImportError:
    print("python3-onnx is not installed for", sys.executable)
    sys.exit(77)

result = {}
for path in sys.argv[1:]:
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # the checker's own exception types differ between versions
        print(f"{path}: the ONNX checker refuses it: {e}".replace("\n", " "))
        sys.exit(1)
    result[path] = {
        "metadata": {p.key: p.value for p in model.metadata_props},
        "inputs": [i.name for i in model.graph.input],
        "outputs": [o.name for o in model.graph.output],
    }
print(json.dumps(result))
