// Progressive enhancement for the upload form: the file input already covers the drop
// zone, so dropping works without this; it only names the chosen files and marks a drag.
(function () {
  const zone = document.getElementById("dropzone");
  if (!zone) return;
  const input = zone.querySelector('input[type="file"]');
  const names = document.getElementById("dz-files");
  const show = () => {
    names.textContent = Array.from(input.files).map((f) => f.name).join(", ");
  };
  input.addEventListener("change", show);
  ["dragenter", "dragover"].forEach((e) => zone.addEventListener(e, () => zone.classList.add("over")));
  ["dragleave", "drop"].forEach((e) => zone.addEventListener(e, () => zone.classList.remove("over")));
  show();
})();
