#include "dfi/session/schema_doc.h"

#include "dfi/session/file_identity.h"
#include "sql_table.h"

namespace dfi::session {
namespace {

template <typename R>
std::string tableMarkdown() {
  using detail::SqlTable;
  std::string text = "### " + std::string(SqlTable<R>::name) + " (" + std::string(FieldTable<R>::name) +
                     " records)\n\n| column | type | unit | meaning |\n|---|---|---|---|\n";
  if constexpr (requires { SqlTable<R>::extraColumns; })
    text += "| " + std::string(SqlTable<R>::extraColumns.substr(0, SqlTable<R>::extraColumns.find(' '))) +
            " | (file only) | | not a record field |\n";
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    std::string type(detail::sqlType<V>(f));
    if (f.name == detail::integerKeyOf<R>()) type += " PK";
    std::string meaning(f.doc);
    if (const auto* added = detail::addedColumn<R>(f.name))
      meaning += " (since schema " + std::to_string(added->sinceVersion) + ")";
    text += "| " + std::string(f.name) + " | " + type + " | " + std::string(f.traits.unit) + " | " + meaning + " |\n";
  });
  return text + "\n";
}

}  // namespace

std::string schemaTablesMarkdown() {
  return tableMarkdown<RunRecord>() + tableMarkdown<PromptRecord>() + tableMarkdown<StepRecord>() +
         tableMarkdown<TreeRecord>() + tableMarkdown<StatisticRecord>() + tableMarkdown<TensorInfo>() +
         tableMarkdown<TokenString>() + tableMarkdown<Annotation>();
}

}  // namespace dfi::session
