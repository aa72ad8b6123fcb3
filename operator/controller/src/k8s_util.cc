#include "k8s_util.h"

#include "switchboard/kube/cache_shapes.h"

namespace switchboard::operator_controller {

json StatusOf(const json& obj) { return kube::UnpackedStatus(obj); }

}  // namespace switchboard::operator_controller
