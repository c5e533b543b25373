"""A small NumPy evaluator for the ONNX graphs `ironlearn-cli export --to onnx` writes (the test's
stand-in for an ONNX runtime, which Debian 12 does not package; onnx 1.12 has no reference
evaluator). It runs the nodes in order with NumPy, per the ONNX operator specifications, for
the operators the export uses, and refuses any other."""
import numpy as np
from onnx import numpy_helper


def _attrs(node):
    out = {}
    for a in node.attribute:
        if a.type == a.INT:
            out[a.name] = a.i
        elif a.type == a.FLOAT:
            out[a.name] = a.f
        elif a.type == a.INTS:
            out[a.name] = list(a.ints)
        elif a.type == a.STRINGS:
            out[a.name] = [s.decode() for s in a.strings]
        else:
            raise ValueError(f"{node.op_type}: attribute {a.name} of type {a.type}")
    return out


def _slice(x, starts, ends, axes):
    index = [slice(None)] * x.ndim
    for s, e, a in zip(starts, ends, axes):
        index[int(a)] = slice(int(s), int(e))
    return x[tuple(index)]


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _one_hot(indices, depth, values, axis):
    depth = int(np.asarray(depth).reshape(-1)[0])
    idx = np.where(indices < 0, indices + depth, indices).astype(np.int64)
    out = np.full(idx.shape + (depth,), values[0], dtype=values.dtype)
    np.put_along_axis(out, idx[..., None], values[1], axis=-1)
    if axis != -1:
        out = np.moveaxis(out, -1, axis)
    return out


# TensorProto data types the export casts to: FLOAT, INT64, BOOL.
_CAST = {1: np.float32, 7: np.int64, 9: np.bool_}


def run(model, feeds):
    """The graph's outputs (name -> array) for the inputs in feeds (name -> array)."""
    g = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    values.update(feeds)
    for node in g.node:
        a = _attrs(node)
        x = [values[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Gemm":
            A, B = x[0], x[1]
            if a.get("transA"):
                A = A.T
            if a.get("transB"):
                B = B.T
            y = np.float32(a.get("alpha", 1.0)) * (A @ B)
            if len(x) > 2 and x[2] is not None:
                y = y + np.float32(a.get("beta", 1.0)) * x[2]
        elif op == "MatMul":
            y = x[0] @ x[1]
        elif op == "Div" and np.issubdtype(x[0].dtype, np.integer):  # truncates, as ONNX
            y = (np.abs(x[0]) // np.abs(x[1])) * np.sign(x[0]) * np.sign(x[1])
        elif op in ("Add", "Sub", "Mul", "Div"):
            y = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](x[0], x[1])
        elif op == "Mod":  # fmod 0: the sign of the divisor, as NumPy's
            y = np.fmod(x[0], x[1]) if a.get("fmod", 0) else np.mod(x[0], x[1])
        elif op == "Floor":
            y = np.floor(x[0])
        elif op == "Min":
            y = x[0]
            for other in x[1:]:
                y = np.minimum(y, other)
        elif op == "Unsqueeze":
            y = x[0]
            for axis in sorted(int(v) for v in x[1]):
                y = np.expand_dims(y, axis)
        elif op == "ReduceSum":
            axes = tuple(int(v) for v in x[1]) if len(x) > 1 and x[1] is not None else None
            y = np.sum(x[0], axis=axes, keepdims=bool(a.get("keepdims", 1)), dtype=x[0].dtype)
        elif op == "Relu":
            y = np.maximum(x[0], np.float32(0))
        elif op == "LeakyRelu":
            y = np.where(x[0] >= 0, x[0], np.float32(a.get("alpha", 0.01)) * x[0])
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Sin":
            y = np.sin(x[0])
        elif op == "Cos":
            y = np.cos(x[0])
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Slice":
            y = _slice(x[0], x[1], x[2], x[3] if len(x) > 3 else range(len(x[1])))
        elif op == "Gather":
            y = np.take(x[0], x[1].astype(np.int64), axis=a.get("axis", 0))
        elif op == "Transpose":
            y = np.transpose(x[0], a.get("perm"))
        elif op == "Conv":  # 1-D, no padding, stride and dilation 1, one group
            windows = np.lib.stride_tricks.sliding_window_view(x[0], x[1].shape[2], axis=2)
            y = np.einsum("ncqk,ock->noq", windows, x[1]).astype(np.float32)
            if len(x) > 2 and x[2] is not None:
                y = y + x[2][None, :, None]
        elif op == "Reshape":
            y = x[0].reshape([int(d) for d in x[1]])
        elif op == "LayerNormalization":
            axis = a.get("axis", -1)
            mean = x[0].mean(axis=axis, keepdims=True)
            var = ((x[0] - mean) ** 2).mean(axis=axis, keepdims=True)
            y = (x[0] - mean) / np.sqrt(var + np.float32(a.get("epsilon", 1e-5))) * x[1] + x[2]
        elif op == "BatchNormalization":
            scale, bias, mean, var = x[1:5]
            y = (x[0] - mean) / np.sqrt(var + np.float32(a.get("epsilon", 1e-5))) * scale + bias
        elif op == "Softmax":
            y = _softmax(x[0], a.get("axis", -1))
        elif op == "ArgMax":
            y = np.argmax(x[0], axis=a.get("axis", 0))
            if a.get("keepdims", 1):
                y = np.expand_dims(y, a.get("axis", 0))
        elif op == "Clip":
            y = np.clip(x[0], x[1], x[2])
        elif op == "LabelEncoder":
            table = dict(zip(a["keys_strings"], a["values_int64s"]))
            default = a.get("default_int64", -1)
            y = np.vectorize(lambda s: table.get(s, default), otypes=[np.int64])(x[0])
        elif op == "OneHot":
            y = _one_hot(x[0], x[1], x[2], a.get("axis", -1))
        elif op == "Cast":
            y = x[0].astype(_CAST[a["to"]])
        elif op == "IsNaN":
            y = np.isnan(x[0])
        elif op == "Less":
            y = np.less(x[0], x[1])
        elif op == "Max":
            y = x[0]
            for other in x[1:]:
                y = np.maximum(y, other)
        elif op == "ReduceMax":
            y = np.max(x[0], axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "Where":
            y = np.where(x[0], x[1], x[2])
        else:
            raise ValueError(f"the NumPy evaluator has no {op}")
        if isinstance(y, np.ndarray) and y.dtype == np.float64:
            y = y.astype(np.float32)
        values[node.output[0]] = y
    return {o.name: values[o.name] for o in g.output}
