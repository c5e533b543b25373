// The ONNX export's graph builder: nodes, initializers, inputs and outputs of one
// onnx::GraphProto, every value under a name no other value has (Graph); the network's layer
// stack in it (network(), OnnxLayers.cpp); and what each kind of task's graph around the network
// is built with (TaskGraph: TaskType::onnxGraph, in the kind's folder).
#pragma once

#include <onnx/onnx_pb.h>

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace il {
class Network;
}

namespace il::io::onnxexport {

class Graph {
public:
    explicit Graph(onnx::GraphProto* g) : m_g(g) {}

    // Keeps name from fresh(): the graph's inputs and outputs are named before the nodes that
    // use them are made, and a table's column may be called "centred_3".
    void reserve(const std::string& name) { m_taken.insert(name); }
    bool taken(const std::string& name) const { return m_taken.count(name) > 0; }
    std::string fresh(const std::string& hint)
    {
        std::string name;
        do
            name = hint + "_" + std::to_string(m_next++);
        while (taken(name));
        m_taken.insert(name);
        return name;
    }

    // A node; returns its (first) output's name (`output`, or a fresh one from hint).
    std::string node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::string& hint, std::string output = {})
    {
        onnx::NodeProto* n = m_g->add_node();
        n->set_op_type(op);
        if (op == "LabelEncoder") n->set_domain("ai.onnx.ml");
        for (const auto& i : inputs)
            n->add_input(i);
        if (output.empty()) output = fresh(hint);
        n->add_output(output);
        n->set_name(output + "_" + op);
        m_last = n;
        return output;
    }
    // Attributes of the last node.
    void attr(const std::string& name, int64_t v)
    {
        auto* a = add(name, onnx::AttributeProto::INT);
        a->set_i(v);
    }
    void attr(const std::string& name, float v)
    {
        auto* a = add(name, onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    void attr(const std::string& name, const std::vector<int64_t>& v)
    {
        auto* a = add(name, onnx::AttributeProto::INTS);
        for (int64_t x : v)
            a->add_ints(x);
    }
    void attr(const std::string& name, const QStringList& v)
    {
        auto* a = add(name, onnx::AttributeProto::STRINGS);
        for (const QString& x : v)
            a->add_strings(x.toStdString());
    }

    std::string floats(const std::string& hint, const std::vector<int64_t>& shape,
                       const std::vector<float>& data)
    {
        return tensor(hint, onnx::TensorProto::FLOAT, shape, data.data(),
                      data.size() * sizeof(float));
    }
    std::string scalar(const std::string& hint, float v) { return floats(hint, {}, {v}); }
    std::string ints(const std::string& hint, const std::vector<int64_t>& data)
    {
        return tensor(hint, onnx::TensorProto::INT64, {static_cast<int64_t>(data.size())},
                      data.data(), data.size() * sizeof(int64_t));
    }
    std::string intScalar(const std::string& hint, int64_t v)
    {
        return tensor(hint, onnx::TensorProto::INT64, {}, &v, sizeof v);
    }

    // dims: -1 is the batch dimension ("N").
    void input(const std::string& name, int type, const std::vector<int64_t>& dims,
               const std::string& doc)
    {
        reserve(name);
        describe(m_g->add_input(), name, type, dims, doc);
    }
    void output(const std::string& name, int type, const std::vector<int64_t>& dims,
                const std::string& doc)
    {
        reserve(name);
        describe(m_g->add_output(), name, type, dims, doc);
    }

private:
    onnx::AttributeProto* add(const std::string& name, onnx::AttributeProto::AttributeType type)
    {
        auto* a = m_last->add_attribute();
        a->set_name(name);
        a->set_type(type);
        return a;
    }
    std::string tensor(const std::string& hint, int type, const std::vector<int64_t>& shape,
                       const void* data, size_t bytes)
    {
        onnx::TensorProto* t = m_g->add_initializer();
        const std::string name = fresh(hint);
        t->set_name(name);
        t->set_data_type(type);
        for (int64_t d : shape)
            t->add_dims(d);
        t->set_raw_data(data, bytes);
        return name;
    }
    static void describe(onnx::ValueInfoProto* v, const std::string& name, int type,
                         const std::vector<int64_t>& dims, const std::string& doc)
    {
        v->set_name(name);
        v->set_doc_string(doc);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(type);
        for (int64_t d : dims) {
            auto* dim = t->mutable_shape()->add_dim();
            if (d < 0)
                dim->set_dim_param("N");
            else
                dim->set_dim_value(d);
        }
    }

    onnx::GraphProto* m_g;
    onnx::NodeProto* m_last = nullptr;
    int m_next = 0;
    std::set<std::string> m_taken;
};

// The network's layer stack on `input` (float [N, inputs], or int64 [N, inputs] when
// integerInput: a names model's character ids), from the network the engine runs: its layers'
// parsed arguments, layouts and weights. value: the outputs (float [N, outputs]); error: why not
// (a layer the graph cannot express), one line.
struct Built {
    std::string value;
    QString error;
};
Built network(Graph& g, const Network& net, const std::string& input, bool integerInput);

// Why a model's task cannot become a graph: the field and what is wrong with it, without the
// file's name (exportOnnx adds it). A kind's graph throws it.
struct Refusal {
    QString text;
};

// What a kind's ONNX graph (TaskType::onnxGraph) builds with: the graph, the model's saved task
// metadata (in today's form) and its network. The kind declares the graph's inputs, runs the
// network on them (network()), declares the outputs, writes the metadata that describes them
// and one summary line per input and output.
class TaskGraph {
public:
    TaskGraph(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
              QStringList& lines)
        : g(g), task(task), net(net), lines(lines), m_proto(proto)
    {
    }

    Graph& g;
    const QJsonObject& task;
    const Network& net;
    // The summary (`export` prints it), a line per input and output:
    // "input  numbers  float [N, 3]: ...".
    QStringList& lines;

    // A metadata_props entry of the model.
    void metadata(const std::string& key, const QString& value);
    // The layer stack on `input` (network() above); throws Refusal for a layer the graph cannot
    // express.
    std::string network(const std::string& input, bool integerInput);

    // task[key] as text ("" when it is not a string).
    QString text(const char* key) const { return task.value(QLatin1String(key)).toString(); }
    // task[key]: a list of `count` strings (count < 0: any number); else throws Refusal.
    QStringList strings(const char* key, qsizetype count) const;
    // task[key]: `count` finite numbers, one per `what` (not 0 where they divide); else throws.
    std::vector<float> numbers(const char* key, size_t count, const QString& what,
                               bool divides) const;
    // A JSON array or object as compact text, for the metadata.
    static QString json(const QJsonValue& v);

private:
    onnx::ModelProto& m_proto;
};

} // namespace il::io::onnxexport
