// Multiresolution hash encoding (Müller et al. 2022, HashGridMath.h) as a first layer: 2-D
// positions in, every level's interpolated features out. Its tables are ordinary trainable
// parameters (one tensor, levels x 2^log2Table rows x features), initialised uniformly in
// [-1e-4, 1e-4] as in the paper, updated by the run's optimizer with the settings of the
// parameter group "grid_tables" (Optimizers.cpp: their own lr, Adam's β₂ and ε).
#include "Errors.h"
#include "Layer.h"

#include <cmath>
#include <string>
#include <vector>

namespace il {

namespace {

class HashGridLayer final : public Layer {
public:
    explicit HashGridLayer(const LayerItem& item) : Layer(item)
    {
        const auto levels = static_cast<int>(item.args[0]);
        const auto features = static_cast<int>(item.args[1]);
        const auto log2Table = static_cast<int>(item.args[2]);
        const double base = item.args[3], scale = item.args[4];
        auto refuse = [&](const std::string& what) {
            throw EngineError("\"" + item.text() + "\": " + what);
        };
        if (levels < 1 || levels > kMaxHashGridLevels)
            refuse("levels must be 1 to " + std::to_string(kMaxHashGridLevels));
        if (features < 1 || features > 8) refuse("features per level must be 1 to 8");
        if (log2Table < 4 || log2Table > 24)
            refuse("the table size is 2^N rows with N from 4 to 24");
        if (!(base >= 1 && base <= 65536)) refuse("the coarsest resolution must be 1 to 65536");
        if (!(scale >= 1 && scale <= 4)) refuse("the growth per level must be 1 to 4");
        if (!(base * std::pow(scale, levels - 1) <= 1 << 20))
            refuse("the finest level would have more than 2^20 cells per side");
        m_grid = hashgrid::make(levels, features, log2Table, base, scale);
    }
    int64_t outputWidth(int64_t in) const override
    {
        if (in != 2)
            throw EngineError("\"" + spec() +
                              "\" encodes 2-D positions (an image's pixel x and y); "
                              "this data has " +
                              std::to_string(in) + " inputs");
        return m_grid.outputs();
    }
    std::vector<ParamSpec> parameters(int64_t) const override
    {
        return {{"table", {m_grid.rows(), m_grid.features}, true, "grid_tables"}};
    }
    void initialize(Backend& backend, Rng& rng, const InitContext&) override
    {
        std::vector<float> table(static_cast<size_t>(m_params[0].size()));
        for (float& v : table)
            v = static_cast<float>(rng.uniform(-1e-4, 1e-4));
        backend.upload(m_params[0], table.data());
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        b.hashGridForward(m_grid, x, m_params[0], y);
    }
    // The table gradient only: the encoding is always first, so no input gradient is asked for.
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor,
                      Tensor) override
    {
        b.hashGridBackward(m_grid, x, dy, m_grads[0]);
    }

public:
    const HashGrid& grid() const { return m_grid; }

private:
    HashGrid m_grid;
};

// ---- the ONNX form ----------------------------------------------------------------------------

// Column `index` of x [N, 2] as [N, 1].
std::string column(OnnxBuilder& g, const std::string& x, int64_t index)
{
    const std::string c = g.node("Gather", {x, g.intScalar("column", index)});
    g.attr("axis", int64_t{1});
    return g.node("Unsqueeze", {c, g.ints("axes", {1})});
}

// a xor b for integers 0 <= a, b < 2^bits (int64 [N, 4]), without ONNX's BitwiseXor (opset 18):
// bit j of each is floor(v / 2^j) mod 2, and a xor b = sum_j 2^j ((a_j + b_j) mod 2).
std::string xorBits(OnnxBuilder& g, const std::string& a, const std::string& b, int bits)
{
    std::vector<int64_t> powers;
    for (int j = 0; j < bits; ++j)
        powers.push_back(int64_t{1} << j);
    const std::string p = g.ints("powers", powers);
    const std::string axis = g.ints("axes", {2});
    auto shifted = [&](const std::string& v) { // [N, 4, bits]: floor(v / 2^j)
        return g.node("Div", {g.node("Unsqueeze", {v, axis}), p});
    };
    const std::string sum = g.node("Add", {shifted(a), shifted(b)});
    const std::string odd = g.node("Mod", {sum, g.intScalar("two", 2)});
    const std::string y = g.node("ReduceSum", {g.node("Mul", {odd, p}), g.ints("axes", {2})});
    g.attr("keepdims", int64_t{0});
    return y;
}

// Row of each of a point's four corners in level l's table (int64 [N, 4]), from its cell ci
// (int64 [N, 2]): its own row where the level's vertices fit the table, else the spatial hash
// (the uint32 product mod T taken as (iy (prime mod T)) mod T, the same number since T divides
// 2^32).
std::string cornerRows(OnnxBuilder& g, const HashGrid& grid, int l, const std::string& ci)
{
    const std::string vx = g.node("Add", {column(g, ci, 0), g.ints("corner_dx", {0, 1, 0, 1})});
    const std::string vy = g.node("Add", {column(g, ci, 1), g.ints("corner_dy", {0, 0, 1, 1})});
    const int64_t rows = grid.tableRows();
    std::string row;
    if (grid.direct(l)) {
        const auto side = static_cast<int64_t>(grid.resolution[l]) + 1;
        row = g.node("Add", {vx, g.node("Mul", {vy, g.intScalar("side", side)})});
    } else {
        const std::string t = g.intScalar("rows", rows);
        const std::string a = g.node("Mod", {vx, t});
        const std::string b = g.node(
            "Mod", {g.node("Mul", {vy, g.intScalar("prime", int64_t{2654435761} % rows)}), t});
        row = xorBits(g, a, b, grid.log2Table);
    }
    return g.node("Add", {row, g.intScalar("level_offset", l * rows)});
}

// The encoding on x [N, 2], level by level with the engine's arithmetic (HashGridMath.h): cell
// and position in float as hashgrid::cell orders them, the four corners gathered from the table
// and weighted bilinearly. Output [N, levels * features], level-major.
std::string hashGridGraph(OnnxBuilder& g, const Layer& layer, const std::string& x)
{
    const HashGrid& grid = static_cast<const HashGridLayer&>(layer).grid();
    const ExportTensor& t = g.tensor("table");
    const std::string table = g.floats("table", {t.rows, t.cols}, t.data);
    const std::string unit =
        g.node("Mul", {g.node("Add", {x, g.scalar("one", 1.f)}), g.scalar("half", 0.5f)});
    std::vector<std::string> levels;
    for (int l = 0; l < grid.levels; ++l) {
        const float n = grid.resolution[l];
        const std::string p = g.node("Clip", {g.node("Mul", {unit, g.scalar("n", n)}),
                                              g.scalar("low", 0.f), g.scalar("n", n)});
        const std::string c = g.node("Min", {g.node("Floor", {p}), g.scalar("last", n - 1.f)});
        const std::string f = g.node("Sub", {p, c}); // [N, 2], inside the cell
        const std::string ci = g.node("Cast", {c});
        g.attr("to", OnnxBuilder::kInt64);
        const std::string corners = g.node("Gather", {table, cornerRows(g, grid, l, ci)});
        const std::string fx = column(g, f, 0), fy = column(g, f, 1);
        const std::string one = g.scalar("one", 1.f);
        const std::string gx = g.node("Sub", {one, fx}), gy = g.node("Sub", {one, fy});
        const std::string w = g.node("Concat", {g.node("Mul", {gx, gy}), g.node("Mul", {fx, gy}),
                                                g.node("Mul", {gx, fy}), g.node("Mul", {fx, fy})});
        g.attr("axis", int64_t{1}); // [N, 4]
        const std::string weighted =
            g.node("Mul", {corners, g.node("Unsqueeze", {w, g.ints("axes", {2})})});
        levels.push_back(g.node("ReduceSum", {weighted, g.ints("axes", {1})}));
        g.attr("keepdims", int64_t{0});
    }
    if (levels.size() == 1) return levels[0];
    const std::string y = g.node("Concat", levels);
    g.attr("axis", int64_t{1});
    return y;
}

// Each grid's size and whether its vertices have rows of their own, e.g.
// "grid 12: 128 x 128 cells, 16,641 vertices in 32,768 rows (own rows)".
std::string details(const LayerItem& item)
{
    if (item.args.size() < 5) return {};
    const HashGrid g =
        hashgrid::make(static_cast<int>(item.args[0]), static_cast<int>(item.args[1]),
                       static_cast<int>(item.args[2]), item.args[3], item.args[4]);
    auto grouped = [](int64_t n) { // 1048576 -> "1,048,576"
        const std::string digits = std::to_string(n);
        std::string s;
        for (size_t i = 0; i < digits.size(); ++i) {
            if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
            s += digits[i];
        }
        return s;
    };
    std::string out = std::to_string(g.levels);
    out += " grids of ";
    out += grouped(g.tableRows());
    out += " rows x ";
    out += std::to_string(g.features);
    out += " numbers (";
    out += grouped(g.rows() * g.features);
    out += " parameters):";
    for (int l = 0; l < g.levels && l < kMaxHashGridLevels; ++l) {
        const auto cells = static_cast<int64_t>(g.resolution[l]);
        const int64_t vertices = (cells + 1) * (cells + 1);
        out += "\ngrid ";
        out += std::to_string(l + 1);
        out += ": ";
        out += std::to_string(cells);
        out += " x ";
        out += std::to_string(cells);
        out += " cells, ";
        out += grouped(vertices);
        out += " vertices, ";
        if (g.direct(l)) {
            out += "own rows";
        } else {
            out += "hashed: about ";
            out += std::to_string((vertices + g.tableRows() - 1) / g.tableRows());
            out += " share a row";
        }
    }
    return out;
}

LayerArg countArg(const char* name, double value, const char* tooltip)
{
    LayerArg a;
    a.name = name;
    a.defaultValue = value;
    a.tooltip = tooltip;
    return a;
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h).
const char* const kHashGridModule = R"py(
class HashGrid(nn.Module):
    """Multiresolution hash encoding of 2-D points in [-1, 1]^2 (Instant NGP): per level, the
    bilinear interpolation of the four vertices' features, level-major."""

    @staticmethod
    def build(args, out, shape):
        a = (args + [""] * 5)[:5]
        layer = HashGrid(int(a[0] or 16), int(a[1] or 2), int(a[2] or 15), _real(a[3], 16.0),
                         _real(a[4], _real("1.26", 0)))
        shape.width, shape.positions, shape.position_width = out, 1, 0
        return layer

    def __init__(self, levels, features, log2_table, base, scale):
        super().__init__()
        self.levels, self.features, self.rows = levels, features, 1 << log2_table
        resolution, n = [], float(base)
        for _ in range(levels):
            resolution.append(max(1, int(n)))
            n *= scale
        self.resolution = resolution
        self.table = nn.Parameter(torch.zeros(levels * self.rows, features))

    def extra_repr(self):
        return f"{self.levels} levels x {self.features} features, {self.rows} rows per level"

    def _cell(self, x, n):
        p = ((x + 1.0) * 0.5) * n
        p = torch.clamp(torch.nan_to_num(p, nan=0.0), 0.0, float(n))
        c = torch.clamp(p.to(torch.int64), max=n - 1)
        return c, p - c.to(x.dtype)

    def _row(self, level, ix, iy):
        n = self.resolution[level]
        if (n + 1) * (n + 1) <= self.rows:
            return ix + iy * (n + 1)
        return (ix ^ ((iy * 2654435761) & 0xFFFFFFFF)) & (self.rows - 1)

    def forward(self, x, inputs):
        out = []
        for level, n in enumerate(self.resolution):
            ix, fx = self._cell(x[:, 0], n)
            iy, fy = self._cell(x[:, 1], n)
            table = self.table[level * self.rows:(level + 1) * self.rows]
            gx, gy = 1.0 - fx, 1.0 - fy
            rows = (self._row(level, ix, iy), self._row(level, ix + 1, iy),
                    self._row(level, ix, iy + 1), self._row(level, ix + 1, iy + 1))
            weights = (gx * gy, fx * gy, gx * fy, fx * fy)
            y = weights[0][:, None] * table[rows[0]] + weights[1][:, None] * table[rows[1]]
            y = y + weights[2][:, None] * table[rows[2]]
            y = y + weights[3][:, None] * table[rows[3]]
            out.append(y)
        return torch.cat(out, dim=1)
)py";

} // namespace

LayerType hashGridLayerType()
{
    LayerType t;
    t.name = "hashgrid";
    t.aliases = {"hash"};
    t.label = "Hash grid encoding";
    t.synopsis = "hashgrid[:levels[:features[:log2_table[:base[:scale]]]]]";
    t.help = "First layer only, 2-D inputs: multiresolution hash encoding (Instant NGP). Each of L "
             "grids (base cells per side, times scale per level) holds F trainable numbers per "
             "vertex in a table of 2^T rows (hashed when the vertices do not fit), read by "
             "bilinear interpolation; L x F outputs (default 16 levels x 2, 2^15 rows, 16 cells, "
             "x1.26: finest 512).";
    LayerArg levels = countArg("levels", 16, "How many grids, coarse to fine (1 to 32).");
    levels.column = EditorColumn::Size;
    LayerArg features = countArg("features", 2, "Trainable numbers per grid vertex (1 to 8).");
    LayerArg log2Table =
        countArg("log2 table size", 15,
                 "Each level's table has 2^N rows (4 to 24); finer levels with more vertices "
                 "than rows share rows through a hash.");
    LayerArg base;
    base.name = "coarsest resolution";
    base.kind = LayerArg::Kind::Real;
    base.defaultValue = 16;
    base.positive = true;
    base.tooltip = "Cells per side of the coarsest grid.";
    LayerArg scale;
    scale.name = "growth per level";
    scale.kind = LayerArg::Kind::Real;
    scale.defaultValue = 1.26;
    scale.positive = true;
    scale.column = EditorColumn::Setting;
    scale.tooltip = "Each grid has this many times the cells per side of the one before "
                    "(1.26 over 16 levels: 16 to 512).";
    t.args = {levels, features, log2Table, base, scale};
    t.firstOnly = "the hash grid encodes the raw input positions, so it must come first";
    t.rngStream = "hashgrid";
    t.details = &details;
    t.formula = "one level's feature, looked up around the point";
    t.exports.onnx = hashGridGraph;
    t.exports.pytorch = kHashGridModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<HashGridLayer>(item);
    };
    return t;
}

} // namespace il
