// A whole cached object as one JSON binary value: its cache key and
// resourceVersion, then the object as MessagePack. A cache of 10,000 small
// objects then holds 10,000 byte strings instead of a std::map node (and
// usually a string) per member, several times less memory; a reader
// unpacks the objects it reads, one at a time (WatcherOptions::pack).
//
// Binary, so that a DOM read of a packed object (obj["metadata"]) throws
// instead of reading nothing; the Store reads key and version through
// CachedKeyOf and CachedVersionOf, which read either form.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/kube/resource.h"

namespace switchboard::kube {

// `object` packed (any JSON value; its key and version as ObjectKeyOf and
// ResourceVersionOf read them).
json PackObject(const json& object);
bool IsPackedObject(const json& value);
// The object `value` packs; `value` itself when it is not a packed object.
json UnpackObject(const json& value);

// ObjectKeyOf and ResourceVersionOf of a packed or an unpacked object.
std::string CachedKeyOf(const json& value);
std::string CachedVersionOf(const json& value);

}  // namespace switchboard::kube
