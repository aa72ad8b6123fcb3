#include "k8s_util.h"

#include "cache_shapes.h"

namespace switchboard::operator_controller {

json StatusOf(const json& obj) { return UnpackedStatus(obj); }

}  // namespace switchboard::operator_controller
