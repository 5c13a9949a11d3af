#include "cli/table.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace tso::cli {

void Table::add_row(std::vector<std::string> cells) {
  TSO_CHECK(cells.size() == columns_.size(), "a table row needs one cell per column");
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out, int indent, bool header) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = header ? columns_[c].header.size() : 0;
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto print_line = [&](auto cell_of) {
    std::string line(indent, ' ');
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_of(c);
      std::string pad(width[c] - cell.size(), ' ');
      if (c > 0) line += "  ";
      line += columns_[c].align == Align::kRight ? pad + cell : cell + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  if (header) print_line([&](size_t c) -> const std::string& { return columns_[c].header; });
  for (const auto& row : rows_) print_line([&](size_t c) -> const std::string& { return row[c]; });
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace tso::cli
