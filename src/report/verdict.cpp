#include "report/verdict.h"
#include "report/message_text.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <pugixml.hpp>

namespace gpulab {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \n\t");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \n\t") - first + 1);
}

// Walks a test case in document order. Catch2 writes a failed assertion's INFO messages as
// <Info> elements just before it, so they are collected until the next assertion.
class CaseReader {
 public:
  CaseReader(CheckCase& out, const std::vector<std::string>& strip) : out_(out), strip_(strip) {}

  void read(const pugi::xml_node& node) {
    for (const auto& child : node.children()) {
      const std::string tag = child.name();
      if (tag == "Info") {
        pending_.push_back(text_of(child));
      } else if (tag == "Warning") {
        skip_reason_ = text_of(child);
      } else if (tag == "Expression") {
        expression(child);
      } else if (tag == "Failure" || tag == "Exception" || tag == "FatalErrorCondition") {
        fail(message(tag, child));
      } else if (tag == "Section") {
        read(child);
      } else if (tag == "OverallResult") {
        out_.passed = child.attribute("success").as_bool();
      }
    }
  }

  void finish() {
    // A skipped check (too few real GPUs) is a Catch2 warning and no assertion at all.
    if (out_.failures.empty() && !skip_reason_.empty() && skip_reason_.find("needs ") == 0) {
      out_.skipped = true;
      out_.skip_reason = skip_reason_;
    }
    if (!out_.failures.empty()) out_.passed = false;
  }

 private:
  std::string text_of(const pugi::xml_node& node) const { return without_prefixes(trimmed(node.text().get()), strip_); }

  static std::string message(const std::string& tag, const std::string& text) {
    if (tag == "Exception") return "error: " + text;
    if (tag == "FatalErrorCondition") return "the checks themselves crashed: " + text;
    return text;
  }
  std::string message(const std::string& tag, const pugi::xml_node& node) const { return message(tag, text_of(node)); }

  void expression(const pugi::xml_node& node) {
    if (node.attribute("success").as_bool()) {
      pending_.clear();
      return;
    }
    // An exception or explicit failure inside the expression says more than the expression.
    for (const char* tag : {"Exception", "FatalErrorCondition", "Failure"})
      if (const auto inner = node.child(tag)) return fail(message(tag, inner));
    const std::string original = without_prefixes(trimmed(node.child("Original").text().get()), strip_);
    const std::string expanded = without_prefixes(trimmed(node.child("Expanded").text().get()), strip_);
    fail("expected: " + original + " — observed: " + expanded);
  }

  void fail(const std::string& text) {
    // Catch2 runs a test case once per SECTION: a check outside the sections fails once per
    // run, and the learner needs to read it once.
    const bool seen = std::any_of(out_.failures.begin(), out_.failures.end(),
                                  [&](const CheckFailure& f) { return f.text == text && f.context == pending_; });
    if (!seen) out_.failures.push_back({text, pending_});
    pending_.clear();
  }

  CheckCase& out_;
  const std::vector<std::string>& strip_;
  std::vector<std::string> pending_;
  std::string skip_reason_;
};

// A context line may hold a program's whole output: keep the start of each.

}  // namespace

std::size_t CheckVerdict::failed() const {
  std::size_t n = 0;
  for (const auto& c : cases) n += (!c.passed && !c.skipped) ? 1 : 0;
  return n;
}

std::size_t CheckVerdict::passed() const {
  std::size_t n = 0;
  for (const auto& c : cases) n += c.passed ? 1 : 0;
  return n;
}

CheckVerdict parse_check_xml(const std::string& xml, const std::vector<std::string>& strip) {
  pugi::xml_document document;
  const auto parsed = document.load_string(xml.c_str());
  // Catch2 2 writes <Catch><Group><TestCase>…; Catch2 3 (xml-format-version 3) writes
  // <Catch2TestRun><TestCase>…, its test cases and their contents as 2 wrote them.
  const auto catch2 = document.child("Catch");
  const auto catch3 = document.child("Catch2TestRun");
  if (!parsed || (!catch2 && !catch3)) throw std::runtime_error("the checks did not produce a readable result");
  CheckVerdict verdict;
  const auto read_cases = [&](const pugi::xml_node& parent) {
    for (const auto& test_case : parent.children("TestCase")) {
      CheckCase c;
      c.name = test_case.attribute("name").value();
      CaseReader reader(c, strip);
      reader.read(test_case);
      reader.finish();
      verdict.cases.push_back(std::move(c));
    }
  };
  if (catch2) {
    for (const auto& group : catch2.children("Group")) read_cases(group);
  } else {
    read_cases(catch3);
  }
  return verdict;
}

}  // namespace gpulab
