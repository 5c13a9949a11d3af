// A plain-text table for command output: columns sized to their widest cell,
// text left-aligned and numbers right-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tso::cli {

// `v` with `digits` digits after the point, for table cells.
std::string fixed(double v, int digits);

class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kLeft;
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // A row has one cell per column.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // Prints the header (unless `header` is false) and the rows, each line
  // prefixed by `indent` spaces, with two spaces between columns and no
  // trailing blanks.
  void print(std::ostream& out, int indent = 0, bool header = true) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tso::cli
