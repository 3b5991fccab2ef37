// A vertex stage whose location 0 is a float2: the pixel stage of mesh_probe.hlsl reads a
// float4 there, which wgpu refuses in create_render_pipeline and check_link reports first.
struct VSOut
{
    float4 Position : SV_Position;
    float2 Uv : TEXCOORD0;
};

[shader("vertex")]
VSOut VSMain(float2 Corner : POSITION)
{
    VSOut o;
    o.Position = float4(Corner, 0.0, 1.0);
    o.Uv = Corner;
    return o;
}
