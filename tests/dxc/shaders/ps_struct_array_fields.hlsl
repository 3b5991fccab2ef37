// A struct of resource arrays: each field takes as many bindings as it has elements, as DXC
// flattens it (textures 0-1, samplers 2-4), and detail comes after them.
struct Atlas
{
    Texture2D pages[2];
    SamplerState samplers[3];
};

Atlas atlas;
Texture2D detail;

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return atlas.pages[1].Sample(atlas.samplers[2], uv) + detail.Sample(atlas.samplers[0], uv);
}
