// Execution test, built for all three targets: a point-list vertex shader that writes
// [[vk::builtin("PointSize")]] = 1.0, as Vulkan validation asks; WGSL has no point size and
// draws 1-pixel points, so there the member is left out (with a warning).
struct VSOut
{
    float4 Pos : SV_Position;
    [[vk::builtin("PointSize")]] float PSize : PSIZE;
    float4 Color : COLOR0;
};
[shader("vertex")] VSOut VSMain(float2 p : POSITION) {
    VSOut o;
    o.Pos = float4(p, 0, 1);
    o.PSize = 1.0;
    o.Color = float4(1, 0.5, 0.25, 1);
    return o;
}
struct PSIn { float4 Pos : SV_Position; float4 Color : COLOR0; };
[shader("pixel")] float4 PSMain(PSIn i) : SV_Target { return i.Color; }
