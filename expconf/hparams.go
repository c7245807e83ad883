package expconf

// Hyperparameter types, as in Determined's experiment config.
const (
	HPConst       = "const"
	HPInt         = "int"
	HPDouble      = "double"
	HPLog         = "log"
	HPCategorical = "categorical"
	// HPNested marks a plain map with no `type`: a nested hyperparameter map.
	HPNested = "nested"
)

// Hyperparameters is the `hyperparameters` section: name → definition.
type Hyperparameters map[string]Hyperparameter

// Hyperparameter is one entry of the hyperparameters map. Which fields are set
// depends on Type:
//   - const: Val (a bare scalar or list in YAML is a const too);
//   - int, double: MinVal, MaxVal (integral for int), optional Count for grid;
//   - log: MinVal, MaxVal are exponents, Base (default 10), optional Count;
//     values are Base^x;
//   - categorical: Vals;
//   - nested: Nested.
type Hyperparameter struct {
	Type   string
	Val    any
	MinVal float64
	MaxVal float64
	Base   float64
	Count  *int
	Vals   []any
	Nested Hyperparameters
}
