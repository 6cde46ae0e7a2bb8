// A validator for the subset of JSON Schema that schema/*.schema.json use (no Python jsonschema needed):
// type (one name or a list), enum, properties, required, additionalProperties (boolean), items, minimum,
// maximum, and $ref to "#/$defs/NAME". Returns the first violation as "path: what", or "" when valid.
// An unknown keyword is reported as a violation, so the schema cannot silently outgrow the validator.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace tt::test {

inline bool json_has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

inline std::string validate_json(const nlohmann::json& v, const nlohmann::json& schema, const nlohmann::json& root,
                                 const std::string& path = "$") {
  static const std::set<std::string> known = {"$schema", "$id", "title", "description", "$defs", "type", "enum",
                                              "properties", "required", "additionalProperties", "items",
                                              "minimum", "maximum", "$ref"};
  for (auto it = schema.begin(); it != schema.end(); ++it)
    if (!known.count(it.key())) return path + ": the validator does not know keyword " + it.key();
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0 || !root["$defs"].contains(ref.substr(prefix.size())))
      return path + ": unresolvable $ref " + ref;
    const std::string e = validate_json(v, root["$defs"][ref.substr(prefix.size())], root, path);
    if (!e.empty()) return e;
  }
  if (schema.contains("type")) {
    bool ok = false;
    if (schema["type"].is_array()) {
      for (const auto& t : schema["type"]) ok = ok || json_has_type(v, t);
    } else {
      ok = json_has_type(v, schema["type"]);
    }
    if (!ok) return path + ": expected type " + schema["type"].dump() + ", got " + v.dump().substr(0, 40);
  }
  if (schema.contains("enum")) {
    bool ok = false;
    for (const auto& e : schema["enum"]) ok = ok || e == v;
    if (!ok) return path + ": " + v.dump() + " is not one of " + schema["enum"].dump();
  }
  if (v.is_number()) {
    if (schema.contains("minimum") && v.get<double>() < schema["minimum"].get<double>())
      return path + ": " + v.dump() + " < minimum " + schema["minimum"].dump();
    if (schema.contains("maximum") && v.get<double>() > schema["maximum"].get<double>())
      return path + ": " + v.dump() + " > maximum " + schema["maximum"].dump();
  }
  if (v.is_object()) {
    for (const auto& r : schema.value("required", nlohmann::json::array()))
      if (!v.contains(r.get<std::string>())) return path + ": missing required key " + r.get<std::string>();
    const nlohmann::json props = schema.value("properties", nlohmann::json::object());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) {
        const std::string e = validate_json(it.value(), props[it.key()], root, path + "." + it.key());
        if (!e.empty()) return e;
      } else if (schema.value("additionalProperties", true) == false) {
        return path + ": key " + it.key() + " is not in the schema";
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string e = validate_json(v[i], schema["items"], root, path + "[" + std::to_string(i) + "]");
      if (!e.empty()) return e;
    }
  return {};
}

}  // namespace tt::test
