// The math class's name, as results and --list-flags give it.
#include "ablations/flag_table/math_class.h"

namespace stepwise::ablations {

std::string to_string(MathClass c) { return kMathClassNames.to_string(c); }

}  // namespace stepwise::ablations
